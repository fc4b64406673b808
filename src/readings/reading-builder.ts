import { RpmlabError } from "../core/errors.ts";
import { type MetricPlan, type ProfilePlan, quantize } from "./plan.ts";
import type { FilterParams, FilterParamValue, MetricRecord } from "./types.ts";

/** Filter param values a capability supplies for one record; the builder keeps the metric's keys. */
export type ParamValues = Readonly<Record<string, FilterParamValue | undefined>>;

/**
 * Collects the records of one physical reading. Capabilities add raw values; the builder clamps
 * and rounds them to the profile's range and step (so codecs, which validate both, accept every
 * generated reading), reports a value above the range as the profile's above_range says (the
 * glucometer's HI with alert, spec 2.8), sets value_2 to null where the profile has none, gives
 * the record exactly the filter_params keys its metric lists, fills index keys with the
 * reading's index (one measurement_index for the whole reading, spec 2.8) and device constants
 * (an inhaler's serial_number), and returns the records in profile order.
 */
export class ReadingBuilder {
  private readonly slots: Array<MetricRecord | undefined>;
  private index = 0;
  private count = 0;
  private readonly shared = new Map<string, FilterParams>();

  constructor(
    readonly plan: ProfilePlan,
    /** filter_params values fixed for the device, e.g. serial_number (its sensor id). */
    private readonly constants: ParamValues = {},
  ) {
    this.slots = new Array(plan.metrics.length).fill(undefined);
  }

  begin(index: number): void {
    this.index = index;
    this.shared.clear();
  }

  /** Adds a record; `raw2` is ignored when the profile's metric has no value 2. */
  add(metric: MetricPlan, raw1: number, raw2: number | null, params: ParamValues | null): void {
    if (this.slots[metric.position] !== undefined) {
      throw new RpmlabError("E_USAGE", `${metric.name} added twice to one reading`);
    }
    let value2: number | null = null;
    if (metric.value2 !== null) {
      if (raw2 === null) {
        throw new RpmlabError(
          "E_PROFILE_INVALID",
          `${metric.name}: the profile has a value 2 that no capability generates`,
          {
            field: "value_2",
          },
        );
      }
      value2 = quantize(metric.value2, raw2);
    }
    const above = metric.aboveRange !== undefined && raw1 > metric.spec.value_1.max;
    this.slots[metric.position] = {
      metric: metric.name,
      value_1: above ? metric.aboveRange!.reported_as : quantize(metric.value1, raw1),
      value_2: value2,
      filter_params: this.params(metric, params, above),
    };
    this.count++;
  }

  private params(
    metric: MetricPlan,
    values: ParamValues | null,
    above: boolean,
  ): FilterParams | null {
    if (metric.keys.length === 0) return null;
    if (metric.indexOnly) {
      let shared = this.shared.get(metric.signature);
      if (shared === undefined) {
        const out: Record<string, FilterParamValue> = {};
        for (const key of metric.keys) out[key] = this.index;
        shared = out;
        this.shared.set(metric.signature, shared);
      }
      return shared;
    }
    const out: Record<string, FilterParamValue> = {};
    for (const key of metric.keys) {
      if (metric.indexKeys.has(key)) {
        out[key] = this.index;
        continue;
      }
      const value =
        above && key === metric.aboveRange!.filter_param
          ? metric.aboveRange!.value
          : (values?.[key] ?? this.constants[key]);
      if (value !== undefined) out[key] = value;
      else if (!metric.optionalKeys.has(key)) {
        throw new RpmlabError(
          "E_PROFILE_INVALID",
          `${this.plan.profile.name}: no capability supplies filter param "${key}" of ${metric.name}`,
          { field: `metrics.${metric.name}.filter_params` },
        );
      }
    }
    return out;
  }

  /** The records added since begin(), in profile order (empty when none were added). */
  finish(): MetricRecord[] {
    const records: MetricRecord[] = [];
    if (this.count === 0) return records;
    for (let i = 0; i < this.slots.length; i++) {
      const record = this.slots[i];
      if (record !== undefined) {
        records.push(record);
        this.slots[i] = undefined;
      }
    }
    this.count = 0;
    return records;
  }
}
