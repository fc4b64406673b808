import type { OutboxEntry } from "../../cellular/outbox.ts";
import { storedValues } from "../../cellular/stored-reading.ts";
import type { MeasureOutcome } from "../../devices/ble-device.ts";
import type { FleetDevice } from "../../devices/fleet-device.ts";
import { deviceMacAddress } from "../../fulfilment/identifiers.ts";
import type { Gateway, QueuedReading } from "../../gateway/gateway.ts";
import { macOf } from "../../gateway/reading-assembler.ts";
import { mappingFor } from "../../gatt/mapping.ts";
import type { PhysicalReading } from "../../readings/types.ts";
import type { DeviceRig, PatientRig } from "./fleet-rigs.ts";

/**
 * The device's unit takes a reading (the patient's, or a re-send): under way on that unit until
 * its outcome is known, which may be after the unit went back to the vendor (retiredUnitHolds).
 */
export function takeOnUnit(
  device: DeviceRig,
  unit: FleetDevice,
  reading: PhysicalReading,
  resentStamp?: number,
): Promise<MeasureOutcome> {
  const outcome = unit.take(reading, resentStamp);
  device.underWay.set(reading, outcome);
  const settled = () => {
    if (device.underWay.get(reading) === outcome) device.underWay.delete(reading);
  };
  void outcome.then(settled, settled);
  return outcome;
}

/**
 * What a replaced unit takes back to the vendor (README "Delivered"): the readings it was still
 * taking or sending when it powered off that did not reach a gateway (kept in its store, or
 * waiting for a gateway it could not store for), and the stored ones no gateway read off it.
 * Known once those under way have settled: a live indication fails only at its ATT timeout,
 * after which the unit stores the reading; counted when it settles, it is counted once.
 */
export async function retiredUnitHolds(
  unit: FleetDevice,
  underWay: ReadonlyMap<PhysicalReading, Promise<MeasureOutcome>>,
): Promise<PhysicalReading[]> {
  const kept: PhysicalReading[] = [];
  for (const [reading, outcome] of underWay) {
    if ((await outcome.catch(() => "lost" as const)) !== "sent") kept.push(reading);
  }
  return [...kept, ...unit.ble.held()];
}

/**
 * A replaced gateway went back to the vendor (stopped: spec 4.3) with what its outbox still
 * holds, readings it read off the patient's devices and never uploaded (off the network): each
 * device's ledger counts its own returned with the unit, read back from the values relayed.
 */
export function gatewayReturned(gateway: Gateway, devices: readonly DeviceRig[]): void {
  for (const [device, readings] of relayedBy(gateway.held(), devices)) {
    device.ledger.returnedRelayed(readings);
  }
}

/**
 * The run (and its drain) ended: what each patient's gateway outbox, each device's unit and
 * each modem's outbox still hold goes in the ledgers as held at the end, not missing (README
 * "Running scenarios"). Called before the fleet stops.
 */
export function heldAtEnd(patients: readonly PatientRig[]): void {
  for (const patient of patients) {
    if (patient.gateway !== undefined) {
      for (const [device, readings] of relayedBy(patient.gateway.held(), patient.devices)) {
        device.ledger.heldRelayedAtEnd(readings);
      }
    }
    for (const device of patient.devices) {
      const unit = device.ble;
      if (unit !== undefined) {
        // A reading still under way is in the store once it settles, if it is kept at all (one
        // a device that cannot store loses is lost by design, not held).
        const settling = [...device.underWay.values()].map((o) => o.catch(() => undefined));
        device.ledger.heldAtEnd(Promise.all(settling).then(() => unit.ble.held()));
      }
      if (device.cellular !== undefined) device.ledger.heldAtEnd(device.cellular.held());
    }
  }
}

/**
 * A gateway's full outbox dropped `items`, its oldest (as hubs do: gateway-modem.ts): each
 * device's ledger counts its own dropped_full, read back from the values relayed.
 */
export function gatewayDropped(
  entries: readonly OutboxEntry<QueuedReading>[],
  devices: readonly DeviceRig[],
): void {
  const items = entries.map((entry) => entry.item);
  for (const [device, readings] of relayedBy(items, devices)) {
    device.ledger.droppedRelayed(readings);
  }
}

/** Readings a gateway relays, by the device they came from, read back from their values. */
function relayedBy(
  items: readonly QueuedReading[],
  devices: readonly DeviceRig[],
): Map<DeviceRig, PhysicalReading[]> {
  const byAddress = new Map(devices.map((d) => [deviceMacAddress(d.hwiDeviceId), d]));
  const relayed = new Map<DeviceRig, PhysicalReading[]>();
  for (const item of items) {
    const device = byAddress.get(macOf(item.deviceAddress ?? ""));
    if (device === undefined) continue;
    let reading: PhysicalReading;
    try {
      reading = mappingFor(device.profile).decode(storedValues(item), device.profile);
    } catch {
      // Values ingestion could not store either: left for the ledger to report as missing.
      continue;
    }
    relayed.set(device, [...(relayed.get(device) ?? []), reading]);
  }
  return relayed;
}
