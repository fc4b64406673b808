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
