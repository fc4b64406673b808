import { performance } from "node:perf_hooks";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import type { Profile } from "../../src/catalogue/schema.ts";
import { CellularDevice } from "../../src/cellular/device.ts";
import { STEADY_LINK_PROFILE } from "../../src/cellular/link.ts";
import { sessionsBack } from "../../src/cellular/modem.ts";
import { Rng } from "../../src/core/rng.ts";
import type { VirtualClock } from "../../src/core/virtual-clock.ts";
import type { MeasureOutcome } from "../../src/devices/ble-device.ts";
import { DirectDevice, DirectRadio } from "../../src/devices/direct-device.ts";
import { deviceMacAddress } from "../../src/fulfilment/identifiers.ts";
import { Gateway } from "../../src/gateway/gateway.ts";
import { DirectBle } from "../../src/gateway/gateway-ble.ts";
import { generateReadings } from "../../src/readings/generate.ts";
import type { GeneratedReading } from "../../src/readings/generated.ts";
import { drawImei } from "../../src/readings/identity.ts";
import { PatientModels } from "../../src/readings/patients.ts";
import { type KeyedRecord, keysAt, recordKey } from "../../src/scenario/run/ledger.ts";
import type { LabApi } from "../support/lab-api.ts";

const catalogue = Catalogue.load();
const patients = PatientModels.load();
export const MIN = 60_000;
export const HOUR = 60 * MIN;
export const DAY = 24 * HOUR;

/**
 * The drills' fleet: one gateway with direct-path devices of seven profiles — three that store
 * offline (cuff, scale, glucometer) and the four gateway profiles that do not (bariatric scale,
 * peak flow meter, fetal doppler, proximity band) — and two direct-cellular devices, one that
 * stores offline (cellular BPM) and one that does not (cellular pulse oximeter).
 */
const GATEWAY_KIT: readonly { name: string; patient: string }[] = [
  { name: "Vendor BPM - Wide Range", patient: "hypertensive" },
  { name: "Vendor Scale", patient: "heart-failure" },
  { name: "Vendor Glucometer", patient: "type2-diabetic" },
  { name: "Vendor Bariatric Scale", patient: "heart-failure" },
  { name: "Vendor Peak Flow Meter", patient: "copd" },
  { name: "Vendor Fetal Doppler", patient: "pregnancy" },
  { name: "Vendor Proximity Band", patient: "normal" },
];
const CELLULAR_KIT: readonly { name: string; patient: string }[] = [
  { name: "Vendor Cellular BPM", patient: "hypertensive" },
  { name: "Vendor Cellular Pulse Ox", patient: "copd" },
];
/** Every direct-cellular type, twice: the fleet of drills that run without a gateway. */
const CELLULAR_ONLY_KIT = [
  ...CELLULAR_KIT,
  { name: "Vendor Cellular Glucometer", patient: "type2-diabetic" },
  { name: "Vendor Cellular Scale", patient: "heart-failure" },
].flatMap((entry) => [entry, entry]);

interface Member {
  readonly profile: Profile;
  readonly hwiDeviceId: string;
  readonly readings: readonly GeneratedReading[];
  /** Each reading's fate as the device saw it: delivered (sent or stored) or lost by design. */
  readonly delivered: Map<GeneratedReading, Promise<boolean>>;
  /**
   * The time each reading carries: a BLE device stamps it with its own clock, whole seconds
   * (Date Time, GSS 3.70), which the gateway set a little behind the lab's; a direct-cellular
   * device sends the reading's own time.
   */
  readonly stamps: Map<GeneratedReading, number>;
}

/** What a drill prints and asserts: the device side and the API side of the same readings. */
export interface DrillCounts {
  /** Readings the devices took (re-sends not included). */
  readonly taken: number;
  /** Taken out of reach by a profile that does not store offline, and never re-sent. */
  readonly lostByDesign: number;
  /** Kept by a device (its store or its modem's outbox) while out of reach, delivered later. */
  readonly storedOffline: number;
  /** Re-sends of a reading the devices sent (ingestion must store them once). */
  readonly duplicatesSent: number;
  /** Metric records the API must hold: those of every reading not lost by design. */
  readonly expectedRecords: number;
  /** Metric records the API holds for the fleet's devices. */
  readonly storedRecords: number;
  /** Expected records the API does not hold. */
  readonly missing: number;
  /** Records the API holds more than once, or that no delivered reading explains. */
  readonly duplicates: number;
  readonly unexpected: number;
  /** A few of the missing and unexpected records, to say what went wrong. */
  readonly mismatches: readonly string[];
}

export interface DrillFleetOptions {
  readonly clock: VirtualClock;
  readonly api: LabApi;
  /** The broker gateways and devices connect to (the lab's mqtt_url unless a drill says). */
  readonly brokerUrl: string;
  /**
   * The gateway of the mixed fleet; undefined: a fleet of direct-cellular devices only, every
   * type twice (for a lab on another clock: a gateway sets its devices' clocks from the lab's).
   */
  readonly gatewayUuid?: string;
  readonly seed: string;
  /** Readings start an hour after the fleet is up and go on for this many days. */
  readonly days: number;
  /** The gateway's state and outbox directory (undefined: memory, lost with the gateway). */
  readonly outboxDir?: string;
  /** Re-sends of earlier readings (src/readings/duplicates.ts). */
  readonly duplicateRate?: number;
  /** Readings per message of a direct-cellular device (default the modem's). */
  readonly cellularBatch?: number;
}

/**
 * Activates the fleet through the HWI API, runs it on the virtual Clock, and counts every
 * reading from the device side and from the API side.
 */
export class DrillFleet {
  readonly radio = new DirectRadio();
  readonly direct: DirectDevice[] = [];
  readonly cellular: CellularDevice[] = [];
  private hub: Gateway | undefined;
  /** When the first reading is taken. */
  readonly start: number;
  private readonly members: Member[] = [];
  private credentials: { username: string; password: string } | undefined;

  private constructor(private readonly options: DrillFleetOptions) {
    this.start = options.clock.now() + HOUR;
  }

  static async launch(options: DrillFleetOptions): Promise<DrillFleet> {
    const fleet = new DrillFleet(options);
    await fleet.activate();
    return fleet;
  }

  /** The mixed fleet's gateway, as last opened. */
  get gateway(): Gateway {
    if (this.hub === undefined) throw new Error("the fleet has no gateway (open)");
    return this.hub;
  }

  get end(): number {
    return this.start + this.options.days * DAY;
  }

  /** The direct-path device of a profile. */
  device(name: string): DirectDevice {
    const found = this.direct.find((d) => d.ble.profile.name === name);
    if (found === undefined) throw new Error(`no ${name} in the fleet`);
    return found;
  }

  private readingsFor(profile: Profile, patient: string, label: string): GeneratedReading[] {
    return generateReadings({
      devices: [profile],
      patient: patients.get(patient),
      rng: new Rng(`${this.options.seed}/${label}`),
      start: this.start,
      days: this.options.days,
      duplicateRate: this.options.duplicateRate ?? 0.05,
    });
  }

  private async activate(): Promise<void> {
    const { api, clock, gatewayUuid } = this.options;
    if (gatewayUuid !== undefined) await this.activateGatewayKit(gatewayUuid);
    const rng = new Rng(`${this.options.seed}/imei`);
    const kit = gatewayUuid === undefined ? CELLULAR_ONLY_KIT : CELLULAR_KIT;
    for (const [i, entry] of kit.entries()) {
      const imei = drawImei(rng);
      const created = await api.hwi<{ id: string }>("POST", "hwi-devices/", {
        device: { name: entry.name, hardware_uuid: imei },
        patient: { external_id: `DRILL-${this.options.seed}-C${i}` },
      });
      if (created.status !== 201) throw new Error(`activate: ${JSON.stringify(created.body)}`);
      const profile = catalogue.get(entry.name);
      const readings = this.readingsFor(profile, entry.patient, `cell/${i}`);
      const credentials = await api.credentials("cellular", imei);
      const device = await CellularDevice.open({
        profile,
        clock,
        rng: new Rng(`${this.options.seed}/cell/${i}`),
        imei,
        readings,
        broker: { url: this.options.brokerUrl, ...credentials },
        link: { profile: STEADY_LINK_PROFILE },
        ...(this.options.cellularBatch === undefined
          ? {}
          : { maxBatch: this.options.cellularBatch }),
      });
      const delivered = new Map<GeneratedReading, Promise<boolean>>();
      const stamps = new Map<GeneratedReading, number>();
      device.events.on("reading", ({ reading, fate }) => {
        stamps.set(reading, reading.timestamp);
        delivered.set(reading, Promise.resolve(fate !== "lost-by-design"));
      });
      this.cellular.push(device);
      this.members.push({ profile, hwiDeviceId: created.body.id, readings, delivered, stamps });
    }
  }

  private async activateGatewayKit(gatewayUuid: string): Promise<void> {
    const { api, clock } = this.options;
    for (const [i, entry] of GATEWAY_KIT.entries()) {
      const created = await api.hwi<{ id: string }>("POST", "hwi-devices/", {
        device: { name: entry.name, hardware_uuid: gatewayUuid },
        patient: { external_id: `DRILL-${gatewayUuid}-${i}` },
      });
      if (created.status !== 201) throw new Error(`activate: ${JSON.stringify(created.body)}`);
      const profile = catalogue.get(entry.name);
      const device = new DirectDevice(
        { profile, clock, serial: `SN${i}`, address: deviceMacAddress(created.body.id) },
        this.radio,
      );
      this.direct.push(device);
      const readings = this.readingsFor(profile, entry.patient, `gw/${i}`);
      const delivered = new Map<GeneratedReading, Promise<boolean>>();
      const stamps = new Map<GeneratedReading, number>();
      for (const r of readings) {
        clock.schedule(r.timestamp, () => {
          stamps.set(r, Math.floor(device.ble.clock.now() / 1000) * 1000);
          delivered.set(
            r,
            device.take(r).then((outcome: MeasureOutcome) => outcome !== "lost"),
          );
        });
      }
      this.members.push({ profile, hwiDeviceId: created.body.id, readings, delivered, stamps });
    }
    this.credentials = await api.credentials("gateway", gatewayUuid);
  }

  /** Opens (or re-opens, after a restart) the gateway on the fleet's outbox directory. */
  async openGateway(): Promise<Gateway> {
    const { clock, gatewayUuid, brokerUrl, outboxDir } = this.options;
    if (gatewayUuid === undefined || this.credentials === undefined) {
      throw new Error("a fleet of direct-cellular devices has no gateway");
    }
    const gateway = await Gateway.open({
      clock,
      rng: new Rng(`${this.options.seed}/gateway`),
      catalogue,
      gatewayUuid,
      broker: { url: brokerUrl, ...this.credentials },
      ble: new DirectBle(this.radio),
      ...(outboxDir === undefined ? {} : { outbox: { dir: outboxDir } }),
      link: { profile: STEADY_LINK_PROFILE },
    });
    this.hub = gateway;
    return gateway;
  }

  async powerOn(): Promise<void> {
    if (this.options.gatewayUuid !== undefined) await (await this.openGateway()).start();
    for (const device of this.cellular) await device.start();
  }

  async stop(): Promise<void> {
    await this.hub?.stop();
    for (const device of this.cellular) await device.stop();
  }

  /** Lets the network I/O of a Clock step finish (acks, reconnects). */
  async settle(): Promise<void> {
    const modems = this.cellular.map((d) => d.modem);
    for (const modem of this.hub === undefined ? modems : [this.hub.modem, ...modems]) {
      await modem.session.settled();
      await modem.drainer.settled();
    }
  }

  /** Steps the Clock to `until`, a few virtual minutes at a time. */
  /** After a broker restart: the gateway's and cellular devices' sessions are back. */
  reconnected(wallMs: number): Promise<void> {
    const modems = this.cellular.map((d) => d.modem);
    return sessionsBack(this.hub === undefined ? modems : [this.hub.modem, ...modems], wallMs);
  }

  async pump(until: number, step = 10 * MIN): Promise<void> {
    const { clock } = this.options;
    while (clock.now() < until) {
      await clock.run({ until: Math.min(until, clock.now() + step) });
      await this.settle();
    }
  }

  /** Readings in the gateway's and the cellular devices' outboxes. */
  private get queued(): number {
    const gateway = this.hub?.stats.outbox.queued ?? 0;
    return gateway + this.cellular.reduce((n, d) => n + d.stats.queued, 0);
  }

  /**
   * Runs past the last reading until nothing waits on a device, in an outbox or in the broker,
   * and the API holds every record expected, or a wall-clock deadline passes.
   */
  async finish(): Promise<DrillCounts> {
    await this.pump(this.end + HOUR);
    const deadline = performance.now() + 60_000;
    let counts = await this.count();
    while ((this.queued > 0 || counts.missing > 0) && performance.now() < deadline) {
      await this.pump(this.options.clock.now() + 5 * MIN, MIN);
      counts = await this.count();
    }
    return counts;
  }

  /** Both sides of the ledger, now. */
  async count(): Promise<DrillCounts> {
    let taken = 0;
    let lostByDesign = 0;
    let expectedRecords = 0;
    let storedRecords = 0;
    let missing = 0;
    let duplicates = 0;
    let unexpected = 0;
    const mismatches: string[] = [];
    for (const member of this.members) {
      const expected = new Set<string>();
      const originals = new Map<string, GeneratedReading>();
      for (const reading of member.readings) {
        const fate = member.delivered.get(reading);
        if (fate === undefined) continue; // not taken yet
        const keys = keysAt(reading, member.stamps.get(reading)!);
        if (!reading.duplicate) {
          taken++;
          originals.set(keys[0]!, reading);
        }
        if (await fate) for (const key of keys) expected.add(key);
      }
      for (const [key, reading] of originals) {
        if (member.delivered.has(reading) && !expected.has(key)) lostByDesign++;
      }
      const stored = await this.options.api.hwi<KeyedRecord[]>(
        "GET",
        `hwi-devices/${member.hwiDeviceId}/measurements/`,
      );
      if (stored.status !== 200) throw new Error(`measurements: ${JSON.stringify(stored.body)}`);
      const seen = new Set<string>();
      for (const record of stored.body) {
        const key = recordKey(record);
        if (seen.has(key)) duplicates++;
        else if (!expected.has(key)) {
          unexpected++;
          mismatches.push(`${member.profile.name}: unexpected ${key}`);
        }
        seen.add(key);
      }
      for (const key of expected) {
        if (seen.has(key)) continue;
        missing++;
        mismatches.push(`${member.profile.name}: missing ${key}`);
      }
      expectedRecords += expected.size;
      storedRecords += stored.body.length;
    }
    const gatewayStored = this.direct.reduce((n, d) => n + d.ble.counts.stored, 0);
    const cellularStored = this.cellular.reduce((n, d) => n + d.stats.storedOffline, 0);
    const duplicatesSent = this.members.reduce(
      (n, m) => n + m.readings.filter((r) => r.duplicate && m.delivered.has(r)).length,
      0,
    );
    return {
      taken,
      lostByDesign,
      storedOffline: gatewayStored + cellularStored,
      duplicatesSent,
      expectedRecords,
      storedRecords,
      missing,
      duplicates,
      unexpected,
      mismatches: mismatches.slice(0, 6),
    };
  }

  /** Readings taken out of reach by devices that do not store offline, from the device side. */
  lostByDesignOnDevices(): number {
    const gateway = this.direct
      .filter((d) => !d.ble.profile.stores_offline)
      .reduce((n, d) => n + d.ble.counts.lost, 0);
    return gateway + this.cellular.reduce((n, d) => n + d.stats.lostByDesign, 0);
  }
}

/** One line per drill, so a CI log shows what each drill did. */
export function printCounts(drill: string, counts: DrillCounts): void {
  const c = counts;
  console.log(
    `drill ${drill}: taken ${c.taken}, stored offline ${c.storedOffline}, lost by design ${c.lostByDesign}, ` +
      `re-sends ${c.duplicatesSent} | API: expected ${c.expectedRecords} records, stored ${c.storedRecords}, ` +
      `missing ${c.missing}, duplicates ${c.duplicates}, unexpected ${c.unexpected}`,
  );
}
