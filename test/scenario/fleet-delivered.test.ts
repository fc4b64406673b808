import { afterEach, describe, expect, it } from "vitest";
import { OutboundQueue } from "../../src/ble/hosts/outbound-queue.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { BleDevice } from "../../src/devices/ble-device.ts";
import type { DirectDeviceOptions } from "../../src/devices/direct-device.ts";
import type { FleetDevice } from "../../src/devices/fleet-device.ts";
import type { HardwareDeliveredEvent } from "../../src/fulfilment/events.ts";
import type { Gateway } from "../../src/gateway/gateway.ts";
import { generateReadings } from "../../src/readings/generate.ts";
import type { GeneratedReading } from "../../src/readings/generated.ts";
import { PatientModels } from "../../src/readings/patients.ts";
import { defaultLibrary } from "../../src/scenario/load.ts";
import { Fleet } from "../../src/scenario/run/fleet.ts";
import type { DeviceRig, FleetDeps, PatientRig } from "../../src/scenario/run/fleet-rigs.ts";
import { HouseholdBle } from "../../src/scenario/run/household-ble.ts";
import { DeviceLedger } from "../../src/scenario/run/ledger.ts";
import type { Cohort, Scenario } from "../../src/scenario/types.ts";
import type { DeviceRow } from "../../src/store/types.ts";

const T0 = Date.UTC(2026, 0, 5);
const GATEWAY = "0A1B2C3D4E5F";
const { catalogue } = defaultLibrary();

/**
 * Fleet.delivered on its own: a patient whose ordered kit's gateway is on (a stand-in, so no
 * broker is needed) and whose devices are not, the BLE path direct.
 */
function patientWithKit(
  fleet: Fleet,
  names: readonly string[],
  readings: (name: string) => GeneratedReading[] = () => [],
  household = new HouseholdBle(undefined, 0),
): PatientRig {
  const devices: DeviceRig[] = names.map((name, i) => ({
    profile: catalogue.get(name),
    serial: `SN-${i}`,
    hwiDeviceId: `00000000-0000-4000-8000-00000000000${i}`,
    ledger: new DeviceLedger(readings(name)),
    ble: undefined,
    underWay: new Map(),
    cellular: undefined,
    deadUntil: Number.NEGATIVE_INFINITY,
  }));
  const patient: PatientRig = {
    cohort: { id: "gw" } as Cohort,
    index: 0,
    externalId: "gw-0001",
    domain: "clinic",
    devices,
    household,
    gatewayUuid: GATEWAY,
    gateway: { stop: async () => {} } as Gateway,
    unlinked: false,
    address: undefined,
  };
  fleet.patients.push(patient);
  return patient;
}

function handedOver(
  devices: readonly { id: string }[],
  replaced: readonly string[] = [],
): HardwareDeliveredEvent {
  return {
    accountId: "clinic",
    orderId: "00000000-0000-4000-8000-000000000000",
    kind: replaced.length > 0 ? "replacement" : "device",
    via: "doorstep",
    patientExternalId: "gw-0001",
    gatewayUuid: GATEWAY,
    devices: devices.map((d) => ({ ...d, hardwareUuid: GATEWAY }) as DeviceRow),
    replacedUnits: replaced,
    signedBy: null,
    at: T0,
  };
}

/** A fleet on `clock`, its BLE path direct (no broker: the patients' gateways are stand-ins). */
function directFleet(clock: VirtualClock): Fleet {
  return new Fleet({
    scenario: { transports: { ble: "direct" } } as Scenario,
    clock,
    rng: new Rng(1),
  } as FleetDeps);
}

/** Three days of the scale's readings from T0, no re-sends. */
function scaleDays(name: string): GeneratedReading[] {
  return generateReadings({
    devices: [catalogue.get(name)],
    patient: PatientModels.load().get("hypertensive"),
    rng: new Rng(7),
    start: T0,
    days: 3,
    duplicateRate: 0,
  }).filter((r) => !r.duplicate);
}

describe("Fleet.delivered", () => {
  let fleet: Fleet | undefined;
  afterEach(async () => {
    await fleet?.stop();
    fleet = undefined;
  });

  it("powers on the devices the box puts to use, not one whose own box is still in the mail", async () => {
    fleet = directFleet(new VirtualClock({ startMs: T0 }));
    const patient = patientWithKit(fleet, ["Vendor BPM - Wide Range", "Vendor Scale"]);
    const [bpm, scale] = patient.devices;

    // The BPM's box brings the gateway; the scale joined that gateway, its box still on its way.
    await fleet.delivered(handedOver([{ id: bpm!.hwiDeviceId }]));
    expect(bpm!.ble).toBeDefined();
    expect(scale!.ble).toBeUndefined();

    // The scale's box arrives: the scale is with the patient and so is its gateway.
    await fleet.delivered(handedOver([{ id: scale!.hwiDeviceId }]));
    expect(scale!.ble).toBeDefined();
  });

  it("powers off a replaced device's old unit when the replacement is delivered: only the new one takes readings", async () => {
    // Spec 4.3 replacement order: the replaced unit goes back to the vendor once the new one is
    // with the patient, as a replaced gateway stops when its replacement arrives.
    const clock = new VirtualClock({ startMs: T0 });
    fleet = directFleet(clock);
    const patient = patientWithKit(fleet, ["Vendor Scale"], scaleDays);
    const scale = patient.devices[0]!;
    const readings = scale.ledger.readings;
    expect(readings.length).toBeGreaterThan(1);
    await fleet.delivered(handedOver([{ id: scale.hwiDeviceId }]));
    const old = scale.ble!;

    // The replacement arrives between the first reading and the rest.
    await clock.run({ until: readings[0]!.timestamp });
    expect(old.ble.stampOf(readings[0]!)).toBeDefined();
    await fleet.delivered(handedOver([{ id: scale.hwiDeviceId }], [scale.hwiDeviceId]));
    const replacement = scale.ble!;
    expect(replacement).not.toBe(old);

    await clock.run({ until: readings.at(-1)!.timestamp });
    // The reading taken at the very instant the replacement came is the old unit's alone.
    expect(replacement.ble.stampOf(readings[0]!)).toBeUndefined();
    expect(scale.ledger.takenCount).toBe(readings.length);
    for (const reading of readings.slice(1)) {
      expect(old.ble.stampOf(reading)).toBeUndefined();
      expect(replacement.ble.stampOf(reading)).toBeDefined();
    }
  });

  it("powers a replaced device's new unit on even while the patient's gateway is in the mail", async () => {
    // The unit is with the patient: it keeps what it takes until a gateway reads it.
    const clock = new VirtualClock({ startMs: T0 });
    fleet = directFleet(clock);
    const patient = patientWithKit(fleet, ["Vendor Scale"], scaleDays);
    const scale = patient.devices[0]!;
    await fleet.delivered(handedOver([{ id: scale.hwiDeviceId }]));
    const old = scale.ble!;
    await fleet.delivered({
      ...handedOver([{ id: scale.hwiDeviceId }], [scale.hwiDeviceId]),
      gatewayUuid: null,
    });
    expect(scale.ble).toBeDefined();
    expect(scale.ble).not.toBe(old);
    const [first] = scale.ledger.readings;
    await clock.run({ until: first!.timestamp });
    expect(scale.ble!.ble.stampOf(first!)).toBeDefined();
    expect(scale.ledger.takenCount).toBe(1);
  });
});

/**
 * A household whose gateway stopped answering mid-visit: its units' live readings go out as
 * indications that wait for a Handle Value Confirmation that never comes, until the ATT
 * transaction timeout (30 s, Vol 3 Part F §3.3.3) fails them, as bleno's host does
 * (OutboundQueue). The unit is a real BleDevice: a failed send keeps the reading stored.
 */
class UnansweredHousehold extends HouseholdBle {
  constructor(private readonly clock: VirtualClock) {
    super(undefined, 0);
  }

  override async device(options: DirectDeviceOptions): Promise<FleetDevice> {
    const ble = new BleDevice(options);
    const outbound = new OutboundQueue(this.clock);
    for (const service of ble.services()) {
      for (const c of service.characteristics) {
        c.subscribe?.(() => outbound.push(true, () => undefined), 244);
      }
    }
    return {
      ble,
      wantsGateway: false,
      waiting: 0,
      take: (reading, resentStamp) => ble.measure(reading, resentStamp),
      setInRange: () => undefined,
      release: () => undefined,
      close: async () => undefined,
    };
  }
}

describe("Fleet.delivered: a reading the replaced unit is still taking", () => {
  let fleet: Fleet | undefined;
  afterEach(async () => {
    await fleet?.stop();
    fleet = undefined;
  });

  it("one it keeps once its send fails after the unit went back counts returned with it, not missing", async () => {
    const clock = new VirtualClock({ startMs: T0 });
    fleet = directFleet(clock);
    const household = new UnansweredHousehold(clock);
    const patient = patientWithKit(fleet, ["Vendor Scale"], scaleDays, household);
    const scale = patient.devices[0]!;
    const first = scale.ledger.readings[0]!;
    await fleet.delivered(handedOver([{ id: scale.hwiDeviceId }]));
    const old = scale.ble!;
    await clock.run({ until: first.timestamp });
    // Being sent when the replacement comes: neither delivered nor in the unit's store yet.
    expect(old.ble.store.size).toBe(0);
    await fleet.delivered(handedOver([{ id: scale.hwiDeviceId }], [scale.hwiDeviceId]));
    // The confirmation never comes: the unit keeps the reading (it stores offline).
    await clock.run({ until: first.timestamp + 60_000 });
    expect(old.ble.held()).toEqual([first]);
    const counts = await scale.ledger.count([]);
    expect(counts).toMatchObject({ taken: 1, returnedWithUnit: 1, missing: 0, lostByDesign: 0 });
  });

  it("one a unit that cannot store was waiting to send: counted once, returned with it (the count does not wait for ever)", async () => {
    // Direct BLE; the household's gateway will visit, but its one radio is busy elsewhere.
    const clock = new VirtualClock({ startMs: T0 });
    fleet = directFleet(clock);
    const patient = patientWithKit(fleet, ["Vendor Bariatric Scale"], scaleDays);
    const scale = patient.devices[0]!;
    expect(scale.profile.stores_offline).toBe(false);
    const stopScan = patient.household.direct.scan(() => true);
    try {
      const first = scale.ledger.readings[0]!;
      await fleet.delivered(handedOver([{ id: scale.hwiDeviceId }]));
      await clock.run({ until: first.timestamp });
      expect(scale.ble!.wantsGateway).toBe(true);
      await fleet.delivered(handedOver([{ id: scale.hwiDeviceId }], [scale.hwiDeviceId]));
      let counts: Awaited<ReturnType<DeviceLedger["count"]>> | undefined;
      void scale.ledger.count([]).then((c) => {
        counts = c;
      });
      await clock.run({ until: first.timestamp + 60_000 });
      expect(counts).toMatchObject({ taken: 1, returnedWithUnit: 1, missing: 0, lostByDesign: 0 });
    } finally {
      stopScan();
    }
  });
});
