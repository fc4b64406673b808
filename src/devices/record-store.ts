import type { CharacteristicValue } from "../gatt/mapping.ts";
import { recordSequenceOf, sequenceAtOrAfter } from "../gatt/record-sequence.ts";
import { VENDOR } from "../gatt/uuids.ts";

/** One stored reading: its first record sequence number and the values the device would send. */
export interface StoredRecord {
  readonly sequence: number;
  readonly values: readonly CharacteristicValue[];
}

/**
 * The last record sequence a stored reading carries. A reading of several Vendor Records numbers
 * them `sequence`, `sequence + 1`, … (mappings/vendor-records.ts), each a record of its own to
 * RACP (vendor/record.ts: "RACP filter type 1"); other readings carry one sequence.
 */
export function lastSequenceOf(record: StoredRecord): number {
  let last = record.sequence;
  for (const v of record.values) {
    if (v.uuid !== VENDOR.record) continue;
    const n = recordSequenceOf(v.uuid, v.value);
    if (n !== undefined && sequenceAtOrAfter(n, last)) last = n;
  }
  return last;
}

/** Whether a value of a stored reading is a record before sequence `from` (one a ≥ n skips). */
export function isRecordBefore(value: CharacteristicValue, from: number): boolean {
  if (value.uuid !== VENDOR.record) return false;
  const n = recordSequenceOf(value.uuid, value.value);
  return n !== undefined && !sequenceAtOrAfter(n, from);
}

/**
 * Readings a device kept while no central was there (profiles with stores_offline), oldest
 * first, up to `capacity` (the oldest go first when full, as meters do).
 */
export class RecordStore {
  private records: StoredRecord[] = [];

  constructor(readonly capacity = 1000) {}

  /** Keeps the record; returns the oldest when that went to make room. */
  add(record: StoredRecord): StoredRecord | undefined {
    this.records.push(record);
    return this.records.length > this.capacity ? this.records.shift() : undefined;
  }

  get size(): number {
    return this.records.length;
  }

  all(): readonly StoredRecord[] {
    return this.records;
  }

  /** Records chosen by an RACP operator over sequence numbers (GSS §3.178.2). */
  select(
    pick: (r: StoredRecord, index: number, all: readonly StoredRecord[]) => boolean,
  ): StoredRecord[] {
    return this.records.filter(pick);
  }

  remove(chosen: readonly StoredRecord[]): void {
    const gone = new Set(chosen);
    this.records = this.records.filter((r) => !gone.has(r));
  }

  clear(): void {
    this.records = [];
  }
}
