import type { LabParts } from "../../app/lab.ts";
import type { RadioMedium } from "../../ble/medium/radio-medium.ts";
import type { Catalogue } from "../../catalogue/catalogue.ts";
import type { Rng } from "../../core/rng.ts";
import type { VirtualClock } from "../../core/virtual-clock.ts";
import { EmulatedDevice } from "../../devices/emulated-device.ts";
import { formatSelector, type Selector } from "../selectors.ts";
import type { ScenarioEvent } from "../types.ts";
import type { FaultLayers } from "./fault-layers.ts";
import type { Fleet } from "./fleet.ts";
import type { DeviceRig, PatientRig } from "./fleet-rigs.ts";
import type { LabClient } from "./lab-client.ts";
import { actionRefused } from "./refused.ts";
import { takeOnUnit } from "./unit-readings.ts";

/** How long (real time) a run waits for the fleet's MQTT sessions after a broker comes back. */
const RECONNECT_WALL_MS = 15_000;

/** What a webhook fault does to the scenario's receiver (receiver.ts). */
export type ReceiverFault =
  | { readonly kind: "down" }
  | { readonly kind: "slow"; readonly delayMs: number }
  | { readonly kind: "error"; readonly status: number };

export interface ActionDeps {
  readonly clock: VirtualClock;
  readonly fleet: Fleet;
  readonly lab: () => LabParts;
  readonly client: LabClient;
  readonly catalogue: Catalogue;
  readonly rng: Rng;
  /** Scenario account id → client domain. */
  readonly domains: ReadonlyMap<string, string>;
  readonly setFault: (webhookId: string, fault: ReceiverFault | null) => void;
  /** A step the run must wait for (a broker coming back) before the clock moves on. */
  readonly hold: (work: Promise<unknown>) => void;
  /** Faults in force, across the run's events: overlapping ones end with the last of them. */
  readonly faults: FaultLayers;
}

const BROKER = "broker";
const webhookKey = (webhookId: string) => `webhook/${webhookId}`;

/**
 * Carries out one timed event of a scenario (issue 7 §1): fault actions on the lab's parts and
 * on the fleet's hardware, undone by the clock after `for`; API actions through the HWI API as
 * an integrating platform would call it. Resolves once the action has taken effect.
 */
export async function perform(deps: ActionDeps, event: ScenarioEvent): Promise<void> {
  const { clock, fleet, faults } = deps;
  const later = (ms: number, undo: () => unknown) => {
    if (Number.isFinite(ms)) {
      clock.schedule(clock.now() + ms, () => deps.hold(Promise.resolve().then(undo)));
    }
  };
  switch (event.action) {
    case "broker.restart": {
      // Down for an outage: it comes back when the last outage ends, not now.
      if (faults.holds(BROKER)) return;
      const { broker } = deps.lab();
      await broker.stop();
      await broker.start();
      await fleet.reconnected(RECONNECT_WALL_MS);
      return;
    }
    case "broker.outage": {
      const { broker } = deps.lab();
      const outage = faults.hold(BROKER, "down", async (down) => {
        if (down !== null) return broker.stop();
        await broker.start();
        await fleet.reconnected(RECONNECT_WALL_MS);
      });
      await outage.started;
      later(event.forMs, outage.end);
      return;
    }
    case "ingestion.restart": {
      const { ingestor } = deps.lab();
      await ingestor.stop();
      await ingestor.start();
      return;
    }
    case "gateway.outage":
      for (const p of withGateway(fleet, event)) p.gateway!.modem.link.outage(event.forMs);
      return;
    case "cellular.outage":
      for (const d of poweredOf(fleet, event)) d.cellular?.modem.link.outage(event.forMs);
      return;
    case "gateway.replace":
      for (const p of patients(fleet, event.target)) await replaceGateway(deps, p);
      return;
    case "gateway.unlink":
      for (const p of withGateway(fleet, event)) {
        const gatewayUuid = await linkedGateway(deps, p);
        await expectOk(
          deps.client.hwi(p.domain, "POST", `/hwi/unlink-gateway/${gatewayUuid}/`),
          `unlinking ${p.externalId}'s gateway ${gatewayUuid}`,
        );
        // Spec 4.2: unlink is called when a patient is unenrolled; they measure no more.
        p.unlinked = true;
      }
      return;
    case "device.out_of_range":
      // On emulated BLE the device moves beyond the range limit and back (EmulatedDevice).
      for (const d of poweredOf(fleet, event)) {
        if (d.ble !== undefined) later(event.forMs, outOfRange(faults, d.ble));
        // A direct-cellular device out of coverage: its modem finds no network.
        d.cellular?.modem.link.coverageHole(event.forMs);
      }
      return;
    case "device.battery_dead": {
      const ms = event.forMs ?? Number.POSITIVE_INFINITY;
      for (const d of devicesOf(fleet, event.target, event.device)) {
        // A shorter battery fault inside a longer one leaves it dead until the longer one ends.
        d.deadUntil = Math.max(d.deadUntil, clock.now() + ms);
        d.cellular?.batteryDead(ms);
      }
      return;
    }
    case "device.clock_drift":
      // A direct-cellular device sends the network's time: no device clock to drift.
      for (const d of poweredOf(fleet, event)) {
        const deviceClock = d.ble?.ble.clock;
        deviceClock?.set(deviceClock.now() + event.driftMs);
      }
      return;
    case "device.duplicate_burst":
      for (const d of poweredOf(fleet, event)) resend(d, event.count);
      return;
    case "webhook.down":
    case "webhook.slow":
    case "webhook.error": {
      const fault: ReceiverFault =
        event.action === "webhook.down"
          ? { kind: "down" }
          : event.action === "webhook.slow"
            ? { kind: "slow", delayMs: event.delayMs }
            : { kind: "error", status: event.status };
      const { end } = faults.hold(webhookKey(event.webhook), fault, (f: ReceiverFault | null) =>
        deps.setFault(event.webhook, f),
      );
      later(event.forMs, end);
      return;
    }
    case "radio.interference": {
      const targets =
        event.target === undefined
          ? fleet.patients.filter((p) => p.cohort.connectivity === "gateway")
          : patients(fleet, event.target);
      if (fleet.radio !== undefined) {
        const around = event.target === undefined ? undefined : targets;
        later(event.forMs, interfere(faults, fleet.radio.medium, around, event.loss));
        return;
      }
      // The direct path has no radio model: interference takes a seeded share of the devices
      // out of reach for the period.
      const rng = deps.rng.fork(`interference/${event.source}`);
      for (const p of targets) {
        for (const d of p.devices) {
          if (d.ble === undefined || rng.next() >= event.loss) continue;
          later(event.forMs, outOfRange(faults, d.ble));
        }
      }
      return;
    }
    case "api.create_patient": {
      const domain = deps.domains.get(event.account)!;
      for (let i = 0; i < event.count; i++) {
        const externalId = `api-${event.source.replace(/\W/g, "")}-${i + 1}`;
        await expectOk(
          deps.client.hwi(domain, "POST", "/hwi/hwi-patients/", {
            external_id: externalId,
            name: `Patient ${externalId}`,
          }),
          `creating patient ${externalId}`,
        );
      }
      return;
    }
    case "api.activate_device":
    case "api.order_device":
      for (const p of patients(fleet, event.target)) {
        const how = event.action === "api.activate_device" ? "activate" : "order";
        await fleet.addDevice(p, deps.catalogue.get(event.device), how);
      }
      return;
    case "api.change_address":
      for (const p of patients(fleet, event.target)) {
        const { street, city, state, zip } = event.address;
        p.address = { address: street, city, state, zip_code: zip };
        await expectOk(
          deps.client.hwi(p.domain, "PATCH", `/hwi/hwi-patients/${p.externalId}/`, p.address),
          `changing ${p.externalId}'s address`,
        );
      }
      return;
    case "api.request": {
      const domain = deps.domains.get(event.account)!;
      await expectOk(
        deps.client.hwi(domain, event.method, event.path, event.body ?? undefined),
        `${event.method} ${event.path}`,
        event.status,
      );
      return;
    }
  }
}

function patients(fleet: Fleet, selector: Selector): PatientRig[] {
  const out: PatientRig[] = [];
  for (let i = selector.from; i <= selector.to; i++) out.push(fleet.rig(selector.cohort, i));
  return out;
}

function devicesOf(fleet: Fleet, selector: Selector, device?: string): DeviceRig[] {
  return patients(fleet, selector).flatMap((p) =>
    p.devices.filter((d) => device === undefined || d.profile.name === device),
  );
}

/**
 * The targeted devices that are on; refused when none is (an ordered kit not delivered yet): a
 * fault on hardware still in its box would do nothing, and a run that counts it as done would
 * pass for the wrong reason.
 */
function poweredOf(
  fleet: Fleet,
  event: { readonly action: string; readonly target: Selector; readonly device?: string },
): DeviceRig[] {
  const targeted = devicesOf(fleet, event.target, event.device);
  const on = targeted.filter((d) => d.ble !== undefined || d.cellular !== undefined);
  if (on.length === 0) {
    throw actionRefused(
      `${event.action} on ${formatSelector(event.target)}: none of its ${targeted.length} devices is on yet (an ordered kit powers on when it is delivered)`,
    );
  }
  return on;
}

/**
 * The targeted patients whose gateway is on; refused when none is (an ordered kit not delivered
 * yet), as poweredOf refuses a device fault: a gateway outage or unlink that did nothing.
 */
function withGateway(
  fleet: Fleet,
  event: { readonly action: string; readonly target: Selector },
): PatientRig[] {
  const targeted = patients(fleet, event.target);
  const on = targeted.filter((p) => p.gateway !== undefined && p.gatewayUuid !== undefined);
  if (on.length === 0) {
    throw actionRefused(
      `${event.action} on ${formatSelector(event.target)}: none of its ${targeted.length} patients has a gateway on yet (an ordered kit powers on when it is delivered)`,
    );
  }
  return on;
}

/** Takes a device out of its gateway's reach (out of range, interference); returns the undo. */
function outOfRange(faults: FaultLayers, ble: NonNullable<DeviceRig["ble"]>): () => unknown {
  return faults.hold(ble, "out", (out) => ble.setInRange(out === null)).end;
}

/** A burst of re-sends: the device's last `count` readings, again. */
function resend(device: DeviceRig, count: number): void {
  device.cellular?.resend(count);
  const direct = device.ble;
  if (direct === undefined) return;
  for (const original of device.ledger.recent(count)) {
    const copy = { ...original, duplicate: true };
    const stamp = device.ledger.stampOf(original);
    device.ledger.taken(
      copy,
      stamp,
      stamp
        // A unit replaced meanwhile sends nothing more (its successor has not these readings).
        .then((at) => (device.ble === direct ? takeOnUnit(device, direct, copy, at) : "lost"))
        .then((outcome) => outcome !== "lost"),
    );
  }
}

/**
 * Emulated BLE: the medium's own interference model (RadioMedium) raises the loss of every PDU
 * by `loss` — around the targets' devices, so on every link of their gateways, or everywhere.
 * Links retransmit, so readings are delayed, and lost only by devices that cannot wait. Each
 * station (or the whole medium) is a fault layer: interference inside a longer one ends with
 * the longer one (README "Actions"), where setting 0 at its end cleared the longer one too.
 * Returns what ends it, on the same stations (or the whole medium).
 */
function interfere(
  faults: FaultLayers,
  medium: RadioMedium,
  targets: PatientRig[] | undefined,
  loss: number,
): () => void {
  if (targets === undefined) {
    return faults.hold(medium, loss, (level) => medium.setInterference(level ?? 0)).end;
  }
  const stations = targets.flatMap((p) =>
    p.devices.flatMap((d) => (d.ble instanceof EmulatedDevice ? [d.ble.station] : [])),
  );
  const ends = stations.map(
    (station) =>
      faults.hold(station, loss, (level) => medium.setInterferenceAround([station], level ?? 0))
        .end,
  );
  return () => {
    for (const end of ends) end();
  };
}

/**
 * The gateway the lab has the patient's devices on: the one at home, or a replacement in the
 * mail, which they moved to when it shipped (spec 4.3); unlinking the one at home then would
 * unlink nothing. Read as a platform would, from one of the devices (GET hwi-devices/{id}/).
 */
async function linkedGateway(deps: ActionDeps, patient: PatientRig): Promise<string> {
  const device = patient.devices.find((d) => d.profile.connectivity === "gateway");
  if (device === undefined) return patient.gatewayUuid!;
  const { status, body } = await deps.client.hwi<{ hardware_uuid?: unknown }>(
    patient.domain,
    "GET",
    `/hwi/hwi-devices/${device.hwiDeviceId}/`,
  );
  const uuid = status === 200 ? body.hardware_uuid : undefined;
  return typeof uuid === "string" ? uuid : patient.gatewayUuid!;
}

/** A replacement gateway ordered for the patient (spec 4.3); it powers on when delivered. */
async function replaceGateway(deps: ActionDeps, patient: PatientRig): Promise<void> {
  const device = patient.devices.find((d) => d.profile.connectivity === "gateway");
  if (device === undefined || patient.address === undefined) return;
  const a = patient.address;
  await expectOk(
    deps.client.hwi(patient.domain, "POST", "/hwi/hwi-replacements/", {
      hwi_device_id: device.hwiDeviceId,
      device_types: [{ name: "Gateway" }],
      shipping_name: `Patient ${patient.externalId}`,
      shipping_address: a.address,
      shipping_city: a.city,
      shipping_state: a.state,
      shipping_zip_code: a.zip_code,
    }),
    `ordering a replacement gateway for ${patient.externalId}`,
  );
}

/** The lab's answer, or the refusal the runner reports as the action's failure (refused.ts). */
async function expectOk(
  answer: Promise<{ status: number; body: unknown }>,
  what: string,
  expected?: number,
) {
  const { status, body } = await answer;
  const ok = expected === undefined ? status >= 200 && status <= 299 : status === expected;
  if (!ok) {
    const wanted = expected === undefined ? "" : ` (expected ${expected})`;
    throw actionRefused(`${what}: ${status}${wanted} ${JSON.stringify(body)}`);
  }
}
