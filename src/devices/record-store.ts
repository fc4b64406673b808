import type { CharacteristicValue } from "../gatt/mapping.ts";

/** One stored reading: its first record sequence number and the values the device would send. */
export interface StoredRecord {
  readonly sequence: number;
  readonly values: readonly CharacteristicValue[];
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
