import { ATT, type CharacteristicDef, type ServiceDef } from "../ble/hosts/peripheral.ts";
import type { Profile } from "../catalogue/schema.ts";
import type { Clock } from "../core/clock.ts";
import { encodeBatteryLevel } from "../gatt/characteristics/battery-level.ts";
import {
  CURRENT_TIME_LENGTH,
  currentTimeAt,
  decodeCurrentTime,
  encodeCurrentTime,
} from "../gatt/characteristics/current-time.ts";
import { encodeDeviceInformationString } from "../gatt/characteristics/device-information.ts";
import { decodeRacp, type RacpMessage, racpAttErrors } from "../gatt/characteristics/racp.ts";
import { epochMsFromDateTime } from "../gatt/date-time.ts";
import { type CharacteristicValue, mappingFor } from "../gatt/mapping.ts";
import { recordSequenceOf, sequenceAtOrAfter } from "../gatt/record-sequence.ts";
import { MEASUREMENT_UUIDS, SIG, VENDOR } from "../gatt/uuids.ts";
import type { PhysicalReading } from "../readings/types.ts";
import { DeviceClock } from "./device-clock.ts";
import { featureValue, layoutOf, pushedUuids, serviceOrder } from "./gatt-layout.ts";
import { RacpServer } from "./racp-server.ts";
import { isRecordBefore, lastSequenceOf, RecordStore, type StoredRecord } from "./record-store.ts";

export interface BleDeviceOptions {
  profile: Profile;
  clock: Clock;
  serial: string;
  /** The device clock's error at start, ms (a fresh battery starts wherever). */
  clockOffsetMs?: number;
  /** How fast the device clock runs off, parts per million. */
  driftPpm?: number;
  firmware?: string;
  /**
   * The record sequence number of its last reading before this run (default none: it starts at
   * 1): a device whose counter outlived the process that simulates it (`rpmlab gateway --ble
   * direct` restarted on its state).
   */
  lastSequence?: number;
}

/** What happened to one reading the device took. */
export type MeasureOutcome = "sent" | "stored" | "lost";

type Send = (value: Uint8Array) => Promise<void>;

/**
 * A virtual device's behaviour on GATT, independent of the host stack: its database (services()
 * for a BlenoPeripheral), live readings on the characteristics the central subscribed to,
 * readings kept while no central listens (profiles that store offline), served through RACP
 * where the profile has it or sent once the central subscribes otherwise (BLS/WSS stored
 * measurements), a Current Time the central sets, and a clock that drifts until then.
 */
export class BleDevice {
  readonly profile: Profile;
  readonly clock: DeviceClock;
  readonly store = new RecordStore();
  readonly counts = { sent: 0, stored: 0, lost: 0, timeWrites: 0 };
  private readonly stamps = new WeakMap<PhysicalReading, number>();
  /** Stored records a central has had through RACP (the meter keeps them: GLS §4.11). */
  private readonly delivered = new WeakSet<StoredRecord>();
  /** The reading each stored record was taken from, to say which ones a unit still holds. */
  private readonly takenFrom = new WeakMap<StoredRecord, PhysicalReading>();
  private readonly subscribed = new Map<string, Send>();
  /** The characteristics its measurements go out on (MEASUREMENT_UUIDS). */
  private readonly measurements: string[];
  private readonly racp: RacpServer | undefined;
  private racpSend: Send | undefined;
  /** Where Current Time notifications go while the central's CCCD asks for them. */
  private timeSend: Send | undefined;
  private nextSequence: number;
  private battery = 100;
  private flushing: Promise<void> | undefined;
  /** Called when the central has subscribed to every characteristic its measurements go out on. */
  onListening: () => void = () => undefined;
  /**
   * Called with the reading of a stored record no central had yet, dropped (the oldest) when
   * the store was full: it will never be sent.
   */
  onDropped: (reading: PhysicalReading) => void = () => undefined;

  constructor(private readonly options: BleDeviceOptions) {
    this.profile = options.profile;
    this.nextSequence =
      options.lastSequence === undefined ? 1 : sequenceAfter(options.lastSequence, 1);
    this.clock = new DeviceClock(options.clock, options.clockOffsetMs ?? 0, options.driftPpm ?? 0);
    this.measurements = pushedUuids(this.profile).filter((uuid) => MEASUREMENT_UUIDS.has(uuid));
    const hasRacp = this.profile.gatt.characteristics.some((c) => c.role === "racp");
    this.racp = hasRacp
      ? new RacpServer(this.store, {
          sendRecord: async (record, from) => {
            // A ≥ n request leaves out the records of a reading the central already has.
            const values =
              from === undefined
                ? record.values
                : record.values.filter((v) => !isRecordBefore(v, from));
            await this.sendValues(values);
            this.delivered.add(record);
          },
          indicate: (value) => this.racpSend?.(value) ?? Promise.resolve(),
        })
      : undefined;
  }

  /** The time this device's clock stamped a reading it measured (a ledger matches records). */
  stampOf(reading: PhysicalReading): number | undefined {
    return this.stamps.get(reading);
  }

  /** Stored readings no central has had yet (what the device wants a gateway for). */
  get unsent(): number {
    let n = 0;
    for (const record of this.store.all()) if (!this.delivered.has(record)) n++;
    return n;
  }

  /**
   * The readings (as measure() was given them) of the stored records no central has had yet:
   * what a unit sent back to the vendor takes with it (replaced: spec 4.3).
   */
  held(): PhysicalReading[] {
    const held: PhysicalReading[] = [];
    for (const record of this.store.all()) {
      const reading = this.takenFrom.get(record);
      if (reading !== undefined && !this.delivered.has(record)) held.push(reading);
    }
    return held;
  }

  /** The local name it advertises (≤ 24 octets, so the scan response keeps room for its data). */
  get localName(): string {
    return `${this.profile.sku}-${this.options.serial.slice(-4)}`.slice(0, 24);
  }

  /**
   * A reading taken now: stamped by the device's own clock (to the second, as Date Time
   * carries it), encoded with the next record sequence, then sent live when the central
   * listens on every characteristic it needs, else stored (or lost if the device cannot store).
   */
  async measure(reading: PhysicalReading, resentStamp?: number): Promise<MeasureOutcome> {
    const stamped: PhysicalReading = {
      ...reading,
      // A re-send repeats the record as the device stamped it the first time.
      timestamp: resentStamp ?? Math.floor(this.clock.now() / 1000) * 1000,
    };
    this.stamps.set(reading, stamped.timestamp);
    const sequence = this.nextSequence;
    const values = mappingFor(this.profile).encode(stamped, this.profile, sequence);
    // One sequence number per Glucose Measurement or vendor record (mapping.ts: record n of a
    // reading gets sequence + n), one per reading otherwise.
    const numbered = values.filter(
      (v) => v.uuid === SIG.characteristics.glucoseMeasurement || v.uuid === VENDOR.record,
    );
    this.nextSequence = sequenceAfter(sequence, Math.max(1, numbered.length));
    const battery = stamped.records.find((r) => r.metric === "battery_percentage");
    if (battery !== undefined) this.battery = battery.value_1;
    // Stored measurements go first: a live one waits for the flush in progress.
    if (this.flushing !== undefined) await this.flushing;
    if (this.listening(values)) {
      try {
        await this.sendValues(values);
        this.counts.sent++;
        return "sent";
      } catch {
        // The link dropped mid-send: keep it like any reading taken out of range.
      }
    }
    if (!this.profile.stores_offline) {
      this.counts.lost++;
      return "lost";
    }
    // RACP selects by the sequence the values carry (record, Glucose Measurement or Reading
    // Context measurement_index): the one the central reads back.
    const carried = values
      .map((v) => recordSequenceOf(v.uuid, v.value))
      .find((n) => n !== undefined);
    const record: StoredRecord = { sequence: carried ?? sequence, values };
    this.takenFrom.set(record, reading);
    const dropped = this.store.add(record);
    this.counts.stored++;
    const lost = dropped === undefined ? undefined : this.takenFrom.get(dropped);
    if (lost !== undefined && !this.delivered.has(dropped!)) this.onDropped(lost);
    return "stored";
  }

  /** The central listens on the characteristics the reading's measurement goes out on. */
  private listening(values: readonly CharacteristicValue[]): boolean {
    return values.every((v) => !MEASUREMENT_UUIDS.has(v.uuid) || this.subscribed.has(v.uuid));
  }

  /**
   * Queues a reading's values together, so another reading's never fall between them. An extra
   * (battery, context) the central did not subscribe to is not sent; the measurement must be.
   */
  private async sendValues(values: readonly CharacteristicValue[]): Promise<void> {
    const sends: Promise<void>[] = [];
    for (const { uuid, value } of values) {
      const send = this.subscribed.get(uuid);
      if (send !== undefined) sends.push(send(value));
      else if (MEASUREMENT_UUIDS.has(uuid)) throw new Error(`not subscribed: ${uuid}`);
    }
    await Promise.all(sends);
  }

  private get measurementsSubscribed(): boolean {
    return this.measurements.every((uuid) => this.subscribed.has(uuid));
  }

  /** The central went away: nothing is subscribed any more (CCCDs are per connection for us). */
  disconnected(): void {
    this.subscribed.clear();
    this.racpSend = undefined;
    this.timeSend = undefined;
  }

  /**
   * Stored measurements without RACP go out once the central listens on the measurement
   * characteristics (BLS 1.1 §3.1.1).
   */
  private maybeFlush(): void {
    if (this.racp !== undefined || this.store.size === 0 || this.flushing !== undefined) return;
    if (!this.measurementsSubscribed) return;
    this.flushing = (async () => {
      try {
        for (const record of [...this.store.all()]) {
          await this.sendValues(record.values);
          this.store.remove([record]);
        }
      } catch {
        // The link dropped: what was not confirmed stays stored for the next connection.
      } finally {
        this.flushing = undefined;
      }
    })();
  }

  /** The device's GATT database with its behaviour, for BlenoPeripheral.serve(). */
  services(): ServiceDef[] {
    const layout = layoutOf(this.profile);
    return serviceOrder(this.profile).map((service) => ({
      uuid: service,
      characteristics: layout
        .filter((c) => c.service === service)
        .map((c) => this.characteristic(c.uuid, c.role, c.properties)),
    }));
  }

  private characteristic(
    uuid: string,
    role: string,
    properties: CharacteristicDef["properties"],
  ): CharacteristicDef {
    const def: CharacteristicDef = { uuid, properties: [...properties] };
    if (role === "information") def.read = () => this.information(uuid);
    else if (role === "feature") def.read = () => featureValue(this.profile, uuid);
    else if (role === "battery") def.read = () => encodeBatteryLevel(this.battery);
    else if (role === "time") {
      def.read = () => encodeCurrentTime(currentTimeAt(this.clock.now()));
      def.write = (value) => this.writeTime(value);
      // CTS 1.1 §3.1: Notify is mandatory; the value goes out when the clock is set.
      if (properties.includes("notify")) {
        def.subscribe = (send) => {
          this.timeSend = send;
        };
        def.unsubscribe = () => {
          this.timeSend = undefined;
        };
      }
      return def;
    } else if (role === "racp") {
      def.write = (value) => this.writeRacp(value);
      def.subscribe = (send) => {
        this.racpSend = send;
      };
      def.unsubscribe = () => {
        this.racpSend = undefined;
      };
      return def;
    } else if (role === "context") def.read = () => new Uint8Array(0);
    if (properties.includes("notify") || properties.includes("indicate")) {
      def.subscribe = (send) => {
        const had = this.measurementsSubscribed;
        this.subscribed.set(uuid, send);
        if (!had && this.measurementsSubscribed) this.onListening();
        this.maybeFlush();
      };
      def.unsubscribe = () => this.subscribed.delete(uuid);
    }
    return def;
  }

  private information(uuid: string): Uint8Array {
    const text: Record<string, string> = {
      [SIG.characteristics.manufacturerName]: "rpmlab",
      [SIG.characteristics.modelNumber]: this.profile.sku,
      [SIG.characteristics.serialNumber]: this.options.serial,
      [SIG.characteristics.firmwareRevision]: this.options.firmware ?? "1.0.0",
    };
    return encodeDeviceInformationString(
      uuid as Parameters<typeof encodeDeviceInformationString>[0],
      text[uuid] ?? "",
    );
  }

  /** Current Time write (CTS 1.1 §3.1.2.1): sets the device clock. */
  private writeTime(value: Buffer): number {
    // CTS §3.1: a fixed 10-octet value; another length is the ATT error, not a bad value.
    if (value.length !== CURRENT_TIME_LENGTH) return ATT.INVALID_ATTRIBUTE_LENGTH;
    try {
      const t = decodeCurrentTime(value);
      // A date with an unknown (0) year, month or day sets no clock: it throws here.
      const ms =
        epochMsFromDateTime(t.dateTime, "Current Time", "exact_time_256") +
        Math.floor((t.fractions256 * 1000) / 256);
      this.clock.set(ms);
      this.counts.timeWrites++;
      this.notifyTime();
      return ATT.SUCCESS;
    } catch {
      return ATT.VALUE_NOT_ALLOWED;
    }
  }

  /**
   * The Current Time just set, notified to a central whose CCCD asks for it (CTS 1.1 §3.1), with
   * Adjust Reason "manual time update" (bit 0): the device cannot tell who wrote it, and Zephyr's
   * CTS server answers a write the same way. After the Write Response, as RACP's indications go.
   */
  private notifyTime(): void {
    const send = this.timeSend;
    if (send === undefined) return;
    const value = encodeCurrentTime(currentTimeAt(this.clock.now(), MANUAL_TIME_UPDATE));
    // A link that drops first loses the notification: nothing to retry (CTS keeps no queue).
    queueMicrotask(() => void send(value).catch(() => undefined));
  }

  /**
   * A central that asks for the records from sequence N on (GLP §4.6.1 "greater than or equal
   * to") holds those before N: a re-send carrying an old sequence is one it has already.
   */
  private passedOver(request: Buffer): void {
    let message: RacpMessage;
    try {
      message = decodeRacp(request);
    } catch {
      return;
    }
    if (message.opCode !== "report_stored_records") return;
    if (!("operator" in message) || message.operator !== "greater_than_or_equal_to") return;
    if (message.filter.type !== "sequence_number") return;
    const from = message.filter.value;
    for (const record of this.store.all()) {
      if (!sequenceAtOrAfter(lastSequenceOf(record), from)) this.delivered.add(record);
    }
  }

  /**
   * RACP write: refused while a procedure runs, and without indications on RACP or on the
   * characteristic its records go out on (GLS §4.11; as Nordic's GLS checks both CCCDs), which
   * would leave a report without its records or its response code. The error codes are the
   * service's (racpAttErrors: GLS 1.0 its own, PLXS and the vendor service CSS's).
   */
  private writeRacp(value: Buffer): number {
    if (this.racp === undefined) return ATT.UNLIKELY_ERROR;
    const errors = racpAttErrors(this.profile.gatt.service);
    if (this.racpSend === undefined || !this.subscribed.has(this.measurements[0]!)) {
      return errors.cccdImproperlyConfigured;
    }
    const isAbort = value[0] === 3;
    if (this.racp.busy && !isAbort) return errors.procedureAlreadyInProgress;
    const racp = this.racp;
    const request = Buffer.from(value);
    this.passedOver(request);
    // The Write Response goes first; the procedure's indications follow it (GLP §4.6).
    queueMicrotask(() => void racp.handle(request).catch(() => undefined));
    return ATT.SUCCESS;
  }
}

const MANUAL_TIME_UPDATE = {
  manualTimeUpdate: true,
  externalReferenceTimeUpdate: false,
  changeOfTimeZone: false,
  changeOfDst: false,
};

/** `count` record sequence numbers on from `sequence`: 16 bits, wrapping past 0 to 1. */
function sequenceAfter(sequence: number, count: number): number {
  return (sequence + count) & 0xffff || 1;
}
