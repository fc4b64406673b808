import { toIsoMicros } from "../../core/time.ts";
import type { GeneratedReading } from "../../readings/generated.ts";

/** What identifies a measurement record as the API returns it and as a device took it. */
export interface KeyedRecord {
  readonly metric: string;
  /** The API's ISO form (toIsoMicros). */
  readonly timestamp: string;
  readonly value_1: string;
  readonly value_2: string;
  readonly filter_params: unknown;
}

/** One string per record, equal for the API's record and the reading it came from. */
export const recordKey = (r: KeyedRecord): string =>
  `${r.timestamp}|${r.metric}|${r.value_1}|${r.value_2}|${JSON.stringify(r.filter_params)}`;

/** The records a reading must become in the API, stamped `at`. */
export function keysAt(reading: GeneratedReading, at: number): string[] {
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
  /** Taken, not lost by design, and not stored. */
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
    this.stamps.set(reading, at);
    this.fates.set(reading, delivered);
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
    let n = 0;
    for (const r of this.fates.keys()) if (!r.duplicate) n++;
    return n;
  }

  /** Both sides, against the records the API holds for the device. */
  async count(stored: readonly KeyedRecord[]): Promise<LedgerCounts> {
    let taken = 0;
    let lostByDesign = 0;
    let resends = 0;
    let storedReadings = 0;
    let missing = 0;
    const mismatches: string[] = [];
    const held = new Map<string, number>();
    for (const record of stored) {
      const key = recordKey(record);
      held.set(key, (held.get(key) ?? 0) + 1);
    }
    const explained = new Set<string>();
    for (const [reading, fate] of this.fates) {
      // As the device stamped it, or at the true time: a gateway that finds a device clock off
      // corrects the stamps of what it reads (src/gateway: clock corrections).
      const keys = keysAt(reading, await this.stamps.get(reading)!);
      const corrected = keysAt(reading, Math.floor(reading.timestamp / 1000) * 1000);
      for (const key of [...keys, ...corrected]) explained.add(key);
      const out = await fate;
      if (reading.duplicate) {
        if (out) resends++;
        continue;
      }
      taken++;
      if (keys.some((key) => held.has(key)) || corrected.some((key) => held.has(key))) {
        storedReadings++;
      } else if (!out) lostByDesign++;
      else {
        missing++;
        if (mismatches.length < 3) mismatches.push(`missing ${keys[0]}`);
      }
    }
    let duplicatesStored = 0;
    let unexpected = 0;
    for (const [key, n] of held) {
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
      missing,
      duplicatesStored,
      resends,
      unexpected,
      mismatches,
    };
  }
}
