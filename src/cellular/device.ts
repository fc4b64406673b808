import type { Profile } from "../catalogue/schema.ts";
import type { Clock, TimerHandle } from "../core/clock.ts";
import { isRpmlabError, RpmlabError } from "../core/errors.ts";
import { TypedEvents } from "../core/events.ts";
import type { Rng } from "../core/rng.ts";
import { mappingFor } from "../gatt/mapping.ts";
import { SIG, VENDOR } from "../gatt/uuids.ts";
import { topicOf } from "../mqtt/topics.ts";
import { cellularUplink } from "../mqtt/uplink.ts";
import type { GeneratedReading } from "../readings/generated.ts";
import type { PhysicalReading } from "../readings/types.ts";
import type { LinkChange } from "./link.ts";
import { Modem, type ModemBroker, type ModemOptions } from "./modem.ts";
import { drawModemIdentity } from "./modem-identity.ts";
import type { OutboxEntry } from "./outbox.ts";
import {
  type StoredReading,
  storedReadingFault,
  storedValues,
  toStoredReading,
} from "./stored-reading.ts";

/**
 * A direct-cellular device (spec 2.8: Cellular BPM, glucometer, pulse oximeter, scale): no
 * gateway, no sensor code, no sensor id; its own modem, identified by its IMEI. It takes the
 * patient's readings on the Clock, encodes each with the same GATT codec a BLE device of its
 * family uses, and publishes `rpm/v1/cell/{imei}/up` envelopes through its modem's outbox.
 *
 * A reading taken while the link is down is kept in the outbox when the profile stores offline,
 * and otherwise lost by design (spec 2.8: the cellular pulse oximeter does not store offline).
 * A reading taken while the link was up is the device's current transmission: it is retried
 * until acknowledged, even if the link drops meanwhile.
 */
export interface CellularDeviceOptions {
  readonly profile: Profile;
  readonly clock: Clock;
  /** The device's own stream (fork it per device): identity and link draw from it. */
  readonly rng: Rng;
  /** Its IMEI (the activated hardware_uuid); drawn from `rng` when not given. */
  readonly imei?: string;
  /** The readings it takes, in time order (src/readings generateReadings, one device). */
  readonly readings: readonly GeneratedReading[];
  readonly broker: ModemBroker;
  /** Outbox size (default 1000 readings, as BLE devices keep) and directory (default memory). */
  readonly outbox?: { readonly capacity?: number; readonly dir?: string };
  readonly link?: ModemOptions<StoredReading>["link"];
  readonly maxBatch?: number;
  readonly retryMs?: number;
}

/** What became of readings, per device. */
export interface CellularDeviceCounts {
  /** Readings taken (re-sends not included). */
  readonly taken: number;
  /** Readings (re-sends included) acknowledged by the broker. */
  readonly sent: number;
  /** Readings taken while the link was down and kept for later (profiles that store offline). */
  readonly storedOffline: number;
  /** Readings taken while the link was down by a device that does not store offline. */
  readonly lostByDesign: number;
  /** Readings dropped because the outbox was full (oldest first). */
  readonly dropped: number;
  /** Re-sends of an earlier reading the device queued (ingestion stores them once). */
  readonly duplicatesSent: number;
  /** Readings waiting in the outbox now. */
  readonly queued: number;
}

export type ReadingFate = "queued" | "stored-offline" | "lost-by-design";

export interface CellularDeviceEvents extends Record<string, unknown> {
  reading: {
    readonly at: number;
    readonly reading: GeneratedReading;
    readonly sequence: number;
    readonly fate: ReadingFate;
  };
  sent: { readonly at: number; readonly messageId: string; readonly readings: number };
  link: LinkChange;
  /** Every reading has been taken. */
  finished: { readonly at: number };
  /** The outbox could not keep a reading (a full disk): the device has stopped taking them. */
  failed: { readonly at: number; readonly error: RpmlabError };
  /** Its outbox was full: these, the oldest it held, were dropped and will never be sent. */
  dropped: { readonly at: number; readonly readings: readonly PhysicalReading[] };
}

/** Readings a BLE device of the same family keeps (src/devices/record-store.ts). */
export const DEFAULT_OUTBOX_CAPACITY = 1000;
/** Re-sends repeat one of the last three readings (src/readings/duplicates.ts). */
const REMEMBERED = 8;

export class CellularDevice {
  readonly events = new TypedEvents<CellularDeviceEvents>();
  private readonly counts = { taken: 0, storedOffline: 0, lostByDesign: 0, duplicatesSent: 0 };
  private next = 0;
  private timer: TimerHandle | undefined;
  private nextSequence: number;
  /** Sequence of recent readings, so a re-send carries the sequence of its original. */
  private readonly sequences = new Map<string, number>();
  private readonly unlisten: (() => void)[] = [];
  /** Battery dead until then: readings due are not taken (scenario fault). */
  private deadUntil = Number.NEGATIVE_INFINITY;
  /** The last readings taken, for a burst of re-sends. */
  private readonly recent: GeneratedReading[] = [];
  /**
   * The readings this process put in the outbox, by entry sequence, oldest first: those that
   * left it (acknowledged or dropped, both from the oldest) are forgotten as others come.
   */
  private readonly queuedReadings = new Map<number, GeneratedReading>();
  /** Why it stopped taking readings: its outbox could not keep one. */
  failure: RpmlabError | undefined;

  private constructor(
    private readonly options: CellularDeviceOptions,
    readonly modem: Modem<StoredReading>,
  ) {
    this.nextSequence = options.rng.fork("sequence").int(1, 999);
    modem.outbox.events.on("dropped", ({ entries }) => {
      const readings = entries.map((entry) => this.readingOf(entry));
      this.events.emit("dropped", { at: options.clock.now(), readings });
    });
  }

  /** Builds the device and its modem (the outbox opens now: E_OUTBOX_UNAVAILABLE). */
  static async open(options: CellularDeviceOptions): Promise<CellularDevice> {
    const { profile, clock, rng } = options;
    if (profile.connectivity !== "cellular") {
      throw new RpmlabError(
        "E_USAGE",
        `${profile.name} connects through a gateway, not its own modem: run it with --ble, not --broker`,
        { field: "profile", value: profile.name },
      );
    }
    const modemRng = rng.fork("modem");
    // The IMEI names the outbox and the topic, so it is settled before the modem is built.
    const imei = options.imei ?? deviceImei(rng);
    const modem = await Modem.open<StoredReading>({
      clock,
      rng: modemRng,
      identity: { imei },
      ...(options.link === undefined ? {} : { link: options.link }),
      broker: {
        ...options.broker,
        // acl.ts: a device's client id is its username (the IMEI) or starts with it.
        clientId: imei,
      },
      outbox: {
        capacity: options.outbox?.capacity ?? DEFAULT_OUTBOX_CAPACITY,
        ...(options.outbox?.dir === undefined ? {} : { dir: options.outbox.dir }),
        name: imei,
        check: storedReadingFault,
      },
      envelope: (batch, sentAt) => ({
        topic: topicOf("cell/up", imei),
        payload: cellularUplink({
          messageId: batch.messageId,
          imei,
          deviceType: profile.name,
          sentAt,
          readings: batch.entries.map(({ item }) => ({
            receivedAt: item.receivedAt,
            sequence: item.sequence,
            values: storedValues(item),
          })),
        }),
      }),
      ...(options.maxBatch === undefined ? {} : { maxBatch: options.maxBatch }),
      ...(options.retryMs === undefined ? {} : { retryMs: options.retryMs }),
    });
    return new CellularDevice(options, modem);
  }

  get imei(): string {
    return this.modem.identity.imei;
  }

  get finished(): boolean {
    return this.next >= this.options.readings.length;
  }

  get stats(): CellularDeviceCounts {
    return {
      ...this.counts,
      sent: this.modem.drainer.counts.items,
      dropped: this.modem.outbox.dropped,
      queued: this.modem.outbox.size,
    };
  }

  /**
   * Powers on: the modem connects (rejects with E_BROKER_UNAVAILABLE / E_BROKER_REFUSED, or with
   * `signal`'s reason when it aborts the wait for the broker), then readings are taken at their
   * times. Readings already due are taken at once, in order.
   */
  async start(signal?: AbortSignal): Promise<void> {
    this.unlisten.push(
      this.modem.link.events.on("change", (change) => this.events.emit("link", change)),
      this.modem.drainer.events.on("sent", ({ messageId, items, at }) =>
        this.events.emit("sent", { at, messageId, readings: items }),
      ),
    );
    await this.modem.start(signal);
    this.schedule();
  }

  /**
   * The readings its outbox still holds (not acknowledged by the broker): what a unit sent back
   * to the vendor takes with it (replaced: spec 4.3). Oldest first, the ones this process took
   * as it was given them; a disk outbox reopened holds an earlier run's too, decoded from their
   * values (the GATT mapping's decode gives the reading back). E_CODEC_* naming the field when
   * an entry is not a reading of this type (the outbox file of another type with this IMEI).
   */
  held(): PhysicalReading[] {
    return this.modem.outbox.held().map((entry) => this.readingOf(entry));
  }

  /** An outbox entry's reading: as this process took it, or decoded from its values. */
  private readingOf({ seq, item }: OutboxEntry<StoredReading>): PhysicalReading {
    const { profile } = this.options;
    return this.queuedReadings.get(seq) ?? mappingFor(profile).decode(storedValues(item), profile);
  }

  /** Powers off: no more readings; what is queued stays in the outbox. */
  async stop(): Promise<void> {
    if (this.timer !== undefined) this.options.clock.clearTimeout(this.timer);
    this.timer = undefined;
    for (const off of this.unlisten.splice(0)) off();
    await this.modem.stop();
  }

  private schedule(): void {
    if (this.failure !== undefined) return;
    const reading = this.options.readings[this.next];
    if (reading === undefined) {
      this.events.emit("finished", { at: this.options.clock.now() });
      return;
    }
    const { clock } = this.options;
    this.timer = clock.setTimeout(() => {
      this.timer = undefined;
      this.next++;
      if (clock.now() >= this.deadUntil) this.take(reading);
      this.schedule();
    }, reading.timestamp - clock.now());
  }

  /** Fault: the battery is dead for `ms` (Infinity: for good); no reading is taken meanwhile. */
  batteryDead(ms: number): void {
    // A shorter fault inside a longer one does not bring the battery back early.
    this.deadUntil = Math.max(this.deadUntil, this.options.clock.now() + ms);
  }

  /** Fault: the device sends its last `count` readings again (ingestion must store them once). */
  resend(count: number): void {
    for (const reading of this.recent.slice(-count)) this.take({ ...reading, duplicate: true });
  }

  private take(reading: GeneratedReading): void {
    const { profile, clock } = this.options;
    const key = readingKey(reading);
    const known = this.sequences.get(key);
    // A re-send carries its original's sequence; a new reading takes the next one.
    const sequence = known ?? this.nextSequence;
    const values = mappingFor(profile).encode(reading, profile, sequence);
    if (known === undefined) {
      // One sequence number per vendor record or Glucose Measurement (mapping.ts: record n of a
      // reading gets sequence + n), one per reading otherwise; as BLE devices count.
      const numbered = values.filter(
        (v) => v.uuid === SIG.characteristics.glucoseMeasurement || v.uuid === VENDOR.record,
      );
      this.nextSequence = (sequence + Math.max(1, numbered.length)) & 0xffff || 1;
      this.sequences.set(key, sequence);
      if (this.sequences.size > REMEMBERED) {
        this.sequences.delete(this.sequences.keys().next().value!);
      }
    }
    let fate: ReadingFate;
    if (this.modem.link.up) fate = "queued";
    else fate = profile.stores_offline ? "stored-offline" : "lost-by-design";
    if (reading.duplicate) {
      if (fate !== "lost-by-design") this.counts.duplicatesSent++;
    } else {
      this.recent.push(reading);
      if (this.recent.length > REMEMBERED) this.recent.shift();
      this.counts.taken++;
      if (fate === "stored-offline") this.counts.storedOffline++;
      if (fate === "lost-by-design") this.counts.lostByDesign++;
    }
    if (fate !== "lost-by-design") {
      try {
        const entry = this.modem.send(
          toStoredReading({ receivedAt: clock.now(), sequence, values }),
        );
        this.queuedReadings.set(entry.seq, reading);
        // The outbox holds at most its capacity, the newest: older entries have left it.
        for (const seq of this.queuedReadings.keys()) {
          if (seq > entry.seq - this.modem.outbox.capacity) break;
          this.queuedReadings.delete(seq);
        }
      } catch (error) {
        if (!isRpmlabError(error, "E_OUTBOX_UNAVAILABLE")) throw error;
        // A reading it cannot keep is not taken as if it were: the device stops, and says why.
        this.failure = error;
        this.events.emit("failed", { at: clock.now(), error });
        return;
      }
    }
    this.events.emit("reading", { at: clock.now(), reading, sequence, fate });
  }
}

/** The IMEI a device on `rng` draws when it is given none (stable for a seed). */
export function deviceImei(rng: Rng): string {
  return drawModemIdentity(rng.fork("modem").fork("identity")).imei;
}

/** A reading's identity as ingestion dedupes it: timestamp and measurement_index. */
export function readingKey(reading: GeneratedReading): string {
  const params = reading.records[0]?.filter_params;
  const index = params?.measurement_index ?? params?.device_log_index ?? "";
  return `${reading.timestamp}/${String(index)}`;
}
