/**
 * A reading as the physical device produced it, before any server-side field (ids, created) is
 * attached. Shared by the generators (which make them), the GATT mappings (which encode and
 * decode them) and, later, the ingestion core.
 */

/** Values of filter_params (spec 2.8): numbers, enum strings, or the inhaler's flag objects. */
export type FilterParamValue = string | number | Readonly<Record<string, number>>;
export type FilterParams = Readonly<Record<string, FilterParamValue>>;

/** One metric record: one row of a measurement response (spec 2.5, wire-formats.md). */
export interface MetricRecord {
  /** API format name, e.g. "blood_pressure". */
  readonly metric: string;
  readonly value_1: number;
  /** null when the metric has no value 2 (rendered "0.00"). */
  readonly value_2: number | null;
  /** null when the record carries no filter params. */
  readonly filter_params: FilterParams | null;
}

/**
 * One physical reading: the coincident records a device emits for one measurement, all with the
 * same timestamp (and, where the type has one, the same measurement_index). Records are in the
 * order of the profile's metric list.
 */
export interface PhysicalReading {
  /** Device clock time, ms since the Unix epoch, UTC. */
  readonly timestamp: number;
  /** Device UTC offset in whole hours (wire-formats.md: timezone_offset is whole hours). */
  readonly timezone_offset: number;
  readonly records: readonly MetricRecord[];
}
