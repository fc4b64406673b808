import { parseIso, toIsoMicros } from "../../core/time.ts";
import type { GeneratedReading } from "../../readings/generated.ts";
import type { PhysicalReading } from "../../readings/types.ts";

/** What identifies a measurement record as the API returns it and as a device took it. */
export interface KeyedRecord {
  readonly metric: string;
  /** The API's ISO form (toIsoMicros). */
  readonly timestamp: string;
  readonly value_1: string;
  readonly value_2: string;
  readonly filter_params: unknown;
  /** Stored at the gateway's receive time: the device's clock was unset (wire-formats.md). */
  readonly estimated_timestamp?: boolean;
}

/** One string per record, equal for the API's record and the reading it came from. */
export const recordKey = (r: KeyedRecord): string => `${r.timestamp}|${valueKey(r)}`;

/** A record's key without its timestamp. */
const valueKey = (r: Omit<KeyedRecord, "timestamp">): string =>
  `${r.metric}|${r.value_1}|${r.value_2}|${JSON.stringify(r.filter_params)}`;

/** The records a reading must become in the API, stamped `at`. */
export function keysAt(reading: PhysicalReading, at: number): string[] {
  return reading.records.map((rec) =>
    recordKey({
      metric: rec.metric,
      timestamp: toIsoMicros(at),
      value_1: rec.value_1.toFixed(2),
      value_2: rec.value_2 === null ? "0.00" : rec.value_2.toFixed(2),
      filter_params: rec.filter_params,
    }),
  );
}

/** One device's readings as the device saw them and as the API holds them. */
export interface LedgerCounts {
  /** Readings taken (re-sends not included). */
  readonly taken: number;
  /** Taken readings with at least one record stored. */
  readonly stored: number;
  /** Taken out of reach by a device that does not store offline: gone, as the model says. */
  readonly lostByDesign: number;
  /** Still held by a unit when its replacement came: back to the vendor with it (README). */
  readonly returnedWithUnit: number;
  /** Still on the device or in a gateway's or modem's outbox when the run (and its drain) ended. */
  readonly heldAtEnd: number;
  /** Dropped, the oldest, by a full device store or outbox, as those do by design (README). */
  readonly droppedFull: number;
  /** Taken, not stored, and none of the fates above: a fault of the lab. */
  readonly missing: number;
  /** Records the API holds more than once. */
  readonly duplicatesStored: number;
  /** Re-sends that went out (ingestion must drop them: the record is stored once). */
  readonly resends: number;
  /** Records the API holds that no reading explains. */
  readonly unexpected: number;
  /** A few missing or unexpected records, to say what went wrong. */
  readonly mismatches: readonly string[];
}

/**
 * The device side of one device's readings: which were taken, when its clock stamped them, and
 * whether each went out (sent or kept to send) or was lost by design. Compared with the records
 * the API holds (count()), it gives the run's readings counts.
 */
export class DeviceLedger {
  private readonly fates = new Map<GeneratedReading, Promise<boolean>>();
  private readonly stamps = new Map<GeneratedReading, number | Promise<number>>();
  /** Readings a replaced unit (device or gateway) still held when it went back to the vendor. */
  private readonly withReturnedUnits = new UnsentReadings();
  /** Readings a device, its modem's outbox or its gateway's still held when the run ended. */
  private readonly stillHeld = new UnsentReadings();
  /** Readings a full device store, modem outbox or gateway outbox dropped. */
  private readonly droppedByFullStores = new UnsentReadings();
  /** Readings taken, re-sends not counted: kept as they come, read at every step's progress. */
  private takenSoFar = 0;

  constructor(readonly readings: readonly GeneratedReading[]) {}

  /**
   * A reading taken, stamped `at` by the device (known once it measured: a device that cannot
   * store measures when a gateway connects); `delivered` says if it goes out at all.
   */
  taken(
    reading: GeneratedReading,
    at: number | Promise<number>,
    delivered: Promise<boolean>,
  ): void {
    if (!reading.duplicate && !this.fates.has(reading)) this.takenSoFar++;
    this.stamps.set(reading, at);
    this.fates.set(reading, delivered);
  }

  /**
   * A unit of this device went back to the vendor (replaced: spec 4.3) holding `readings`:
   * readings no gateway read off it, or still in its modem's outbox. They will never be sent.
   * A promise when that is known only later: a reading the unit was still taking settles after
   * it powered off (count() waits for it, as it waits for every reading's fate).
   */
  returned(readings: readonly PhysicalReading[] | Promise<readonly PhysicalReading[]>): void {
    this.withReturnedUnits.add(readings);
  }

  /**
   * A gateway went back to the vendor (replaced: spec 4.3) with `readings` of this device in its
   * outbox, read back from the values it relays: stamped as the device stamped them, matched to
   * the readings taken by their records.
   */
  returnedRelayed(readings: readonly PhysicalReading[]): void {
    this.withReturnedUnits.addRelayed(readings);
  }

  /**
   * The run ended (its drain too) with `readings` still on the device's unit or in its modem's
   * outbox: not sent yet, through no fault of the lab (a fault that outlasted the run, a gateway
   * unlinked while the device was out of its reach). A promise as for returned().
   */
  heldAtEnd(readings: readonly PhysicalReading[] | Promise<readonly PhysicalReading[]>): void {
    this.stillHeld.add(readings);
  }

  /**
   * The run ended with `readings` of this device in its gateway's outbox, read back from the
   * values relayed (as returnedRelayed()).
   */
  heldRelayedAtEnd(readings: readonly PhysicalReading[]): void {
    this.stillHeld.addRelayed(readings);
  }

  /**
   * The device's store or its modem's outbox was full and dropped `readings`, its oldest (as
   * meters and modems do): they will never be sent.
   */
  droppedFull(readings: readonly PhysicalReading[]): void {
    this.droppedByFullStores.add(readings);
  }

  /** The gateway's full outbox dropped `readings` of this device (as returnedRelayed() reads). */
  droppedRelayed(readings: readonly PhysicalReading[]): void {
    this.droppedByFullStores.addRelayed(readings);
  }

  /** Whether a unit of this device has taken the reading (a replacement does not take it again). */
  hasTaken(reading: GeneratedReading): boolean {
    return this.fates.has(reading);
  }

  /** The last `count` readings taken, to send again (a duplicate burst). */
  recent(count: number): GeneratedReading[] {
    return [...this.fates.keys()].filter((r) => !r.duplicate).slice(-count);
  }

  /** The time the device stamped a reading it took with. */
  stampOf(reading: GeneratedReading): Promise<number> {
    return Promise.resolve(this.stamps.get(reading) ?? reading.timestamp);
  }

  get takenCount(): number {
    return this.takenSoFar;
  }

  /** Counts `keys` as explained; true when there is any. */
  private explain(keys: readonly string[], explained: Set<string>): boolean {
    for (const key of keys) explained.add(key);
    return keys.length > 0;
  }

  /** Both sides, against the records the API holds for the device. */
  async count(stored: readonly KeyedRecord[]): Promise<LedgerCounts> {
    await this.withReturnedUnits.settled();
    await this.stillHeld.settled();
    let taken = 0;
    let lostByDesign = 0;
    let returnedWithUnit = 0;
    let heldAtEnd = 0;
    let droppedFull = 0;
    let resends = 0;
    let storedReadings = 0;
    let missing = 0;
    const mismatches: string[] = [];
    const inApi = new Map<string, number>();
    for (const record of stored) {
      const key = recordKey(record);
      inApi.set(key, (inApi.get(key) ?? 0) + 1);
    }
    const explained = new Set<string>();
    const estimated = stored
      .filter((r) => r.estimated_timestamp === true)
      .map((r) => ({ key: recordKey(r), value: valueKey(r), at: parseIso(r.timestamp) ?? 0 }))
      .sort((a, b) => a.at - b.at);
    const claimed = new Set<(typeof estimated)[number]>();
    /**
     * The records of a reading taken with the device's clock unset: stored at the time the
     * gateway received them, which is after the reading by the visit's latency (emulated BLE)
     * or by the wait for a gateway (a device that stores offline). The earliest not yet claimed.
     */
    const receivedLater = (reading: GeneratedReading): string[] => {
      const from = Math.floor(reading.timestamp / 1000) * 1000;
      const found: string[] = [];
      for (const key of keysAt(reading, 0)) {
        const value = key.slice(key.indexOf("|") + 1);
        const hit = estimated.find((e) => !claimed.has(e) && e.at >= from && e.value === value);
        if (hit === undefined) continue;
        claimed.add(hit);
        found.push(hit.key);
      }
      return found;
    };
    for (const [reading, fate] of this.fates) {
      // As the device stamped it, or at the true time: a gateway that finds a device clock off
      // corrects the stamps of what it reads (src/gateway: clock corrections).
      const keys = keysAt(reading, await this.stamps.get(reading)!);
      const corrected = keysAt(reading, Math.floor(reading.timestamp / 1000) * 1000);
      for (const key of [...keys, ...corrected]) explained.add(key);
      const out = await fate;
      // Held by a unit that went back to the vendor: it never went out, unless stored after all
      // (an upload under way when the unit was packed may still have reached the platform).
      const returned = this.withReturnedUnits.has(reading, keys);
      const held = this.stillHeld.has(reading, keys);
      const dropped = this.droppedByFullStores.has(reading, keys);
      if (reading.duplicate) {
        // A re-send still held, or dropped, never reached ingestion: nothing for it to suppress.
        if (out && !returned && !held && !dropped) resends++;
        continue;
      }
      taken++;
      if (keys.some((key) => inApi.has(key)) || corrected.some((key) => inApi.has(key))) {
        storedReadings++;
      } else if (out && estimated.length > 0 && this.explain(receivedLater(reading), explained)) {
        storedReadings++;
      } else if (returned) returnedWithUnit++;
      else if (held) heldAtEnd++;
      else if (dropped) droppedFull++;
      else if (!out) lostByDesign++;
      else {
        missing++;
        if (mismatches.length < 3) mismatches.push(`missing ${keys[0]}`);
      }
    }
    let duplicatesStored = 0;
    let unexpected = 0;
    for (const [key, n] of inApi) {
      duplicatesStored += n - 1;
      if (!explained.has(key)) {
        unexpected++;
        if (mismatches.length < 6) mismatches.push(`unexpected ${key}`);
      }
    }
    return {
      taken,
      stored: storedReadings,
      lostByDesign,
      returnedWithUnit,
      heldAtEnd,
      droppedFull,
      missing,
      duplicatesStored,
      resends,
      unexpected,
      mismatches,
    };
  }
}

/**
 * Readings that did not go out for one reason, known by the reading itself (what a device or a
 * modem outbox held) or by its records (what a gateway relayed, read back from their values and
 * stamped as the device stamped them), or known only later (a promise: a reading a unit was
 * still taking settles after it powered off).
 */
class UnsentReadings {
  private readonly readings = new Set<PhysicalReading>();
  private readonly records = new Set<string>();
  private readonly pending: Promise<readonly PhysicalReading[]>[] = [];

  add(readings: readonly PhysicalReading[] | Promise<readonly PhysicalReading[]>): void {
    if (readings instanceof Promise) this.pending.push(readings);
    else for (const reading of readings) this.readings.add(reading);
  }

  addRelayed(readings: readonly PhysicalReading[]): void {
    for (const reading of readings) {
      for (const key of keysAt(reading, reading.timestamp)) this.records.add(key);
    }
  }

  /** Waits for those known later. */
  async settled(): Promise<void> {
    for (const readings of await Promise.all(this.pending.splice(0))) this.add(readings);
  }

  /** Whether the reading, stamped as `keys`, is one of them. */
  has(reading: PhysicalReading, keys: readonly string[]): boolean {
    return this.readings.has(reading) || keys.some((key) => this.records.has(key));
  }
}
