import type { Rng } from "../../core/rng.ts";
import type { PatientState } from "../physiology/patient-state.ts";
import type { MetricPlan, ProfilePlan } from "../plan.ts";
import type { ReadingBuilder } from "../reading-builder.ts";

/**
 * Why a device takes a reading at an instant: a scheduled use, an as-needed (rescue) inhaler
 * use, the start or end of an interval device's sync cycle (medication cap), or a companion
 * device's reading (proximity band).
 */
export type OccasionKind = "scheduled" | "rescue" | "cycle_start" | "cycle_end" | "companion";

export interface Occasion {
  /** Device clock, ms since the epoch UTC, whole minutes. */
  readonly t: number;
  readonly kind: OccasionKind;
}

/** An occasion with the patient's local day index, computed once for every capability. */
export interface Moment extends Occasion {
  readonly day: number;
}

/** Per-device settings a capability may need beyond the profile (spec 2.4 sensor_id). */
export interface DeviceSettings {
  /** Serial number of an inhaler sensor (its sensor_id); drawn when not given. */
  readonly serialNumber?: string;
}

export interface BindContext {
  readonly plan: ProfilePlan;
  readonly patient: PatientState;
  /** The capability's own stream, forked from the device's by capability name. */
  readonly rng: Rng;
  readonly settings: DeviceSettings;
}

/** A capability bound to one device: adds its records to the reading at each occasion. */
export interface Emitter {
  emit(moment: Moment, out: ReadingBuilder): void;
}

/**
 * A small named behaviour (STYLE habit 1): turns patient state at an instant plus its Rng into
 * the records of the metrics it knows, for whichever of them the device's profile lists.
 */
export interface Capability {
  readonly name: string;
  /** Metric names (spec 2.8 API format) this capability generates. */
  readonly metrics: readonly string[];
  bind(ctx: BindContext): Emitter;
}

/** The profile's plan of a metric, or undefined when the profile does not list it. */
export function metric(ctx: BindContext, name: string): MetricPlan | undefined {
  return ctx.plan.byName.get(name);
}
