import { describe, expect, it } from "vitest";
import type {
  FilterParamSpec,
  MetricSpec,
  Profile,
  ValueSpec,
} from "../../src/catalogue/schema.ts";
import { onStepGrid } from "../../src/catalogue/step-grid.ts";
import { MS_PER_DAY, MS_PER_HOUR, MS_PER_MINUTE } from "../../src/core/time.ts";
import { DEFAULT_START } from "../../src/readings/generate.ts";
import type { GeneratedReading } from "../../src/readings/generated.ts";
import type { MetricRecord } from "../../src/readings/types.ts";
import { catalogue, generate, patients } from "./helpers.ts";

/**
 * Catalogue-wide invariants (STYLE habit 13): for every device profile present and every patient
 * model, the generated records are exactly what the profile (and so the codecs) accept.
 */

const DAYS = 28;

function valueProblems(value: number, spec: ValueSpec, where: string): string[] {
  const problems: string[] = [];
  if (!Number.isFinite(value)) problems.push(`${where} is ${value}`);
  if (value < spec.min || value > spec.max)
    problems.push(`${where} ${value} outside [${spec.min}, ${spec.max}]`);
  if (!onStepGrid(value, spec.step))
    problems.push(`${where} ${value} not a multiple of ${spec.step}`);
  return problems;
}

function paramProblems(
  value: unknown,
  spec: FilterParamSpec,
  metric: string,
  where: string,
): string[] {
  switch (spec.kind) {
    case "positive_integer":
      return Number.isInteger(value) && (value as number) > 0
        ? []
        : [`${where} not a positive integer: ${String(value)}`];
    case "enum":
      return spec.values.includes(value as string)
        ? []
        : [`${where} "${String(value)}" not in ${spec.values.join(" | ")}`];
    case "pattern":
      return typeof value === "string" && new RegExp(spec.pattern).test(value)
        ? []
        : [`${where} "${String(value)}" does not match ${spec.pattern}`];
    case "flags": {
      const want = spec.by_metric[metric] ?? {};
      if (typeof value !== "object" || value === null) return [`${where} is not an object`];
      const flags = value as Record<string, unknown>;
      const problems: string[] = [];
      if (Object.keys(flags).join() !== Object.keys(want).join()) {
        problems.push(`${where} keys ${Object.keys(flags).join()} != ${Object.keys(want).join()}`);
      }
      for (const [name, kind] of Object.entries(want)) {
        const v = flags[name];
        const ok = kind === "bit" ? v === 0 || v === 1 : Number.isInteger(v) && (v as number) >= 1;
        if (!ok) problems.push(`${where}.${name} = ${String(v)} is not a ${kind}`);
      }
      return problems;
    }
  }
}

function recordProblems(record: MetricRecord, metric: MetricSpec, profile: Profile, where: string) {
  const problems = valueProblems(record.value_1, metric.value_1, `${where} value_1`);
  if (metric.value_2 === null) {
    if (record.value_2 !== null) problems.push(`${where} value_2 should be null`);
  } else if (record.value_2 === null) {
    problems.push(`${where} value_2 missing`);
  } else {
    problems.push(...valueProblems(record.value_2, metric.value_2, `${where} value_2`));
  }
  const params = record.filter_params;
  if (metric.filter_params.length === 0) {
    if (params !== null) problems.push(`${where} filter_params should be null`);
    return problems;
  }
  if (params === null) return [...problems, `${where} filter_params missing`];
  const keys = Object.keys(params);
  const specs = new Map(profile.filter_params.map((f) => [f.key, f]));
  for (const key of metric.filter_params) {
    const spec = specs.get(key)!;
    const optional = spec.kind === "enum" && spec.presence === "when_applicable";
    if (!(key in params)) {
      if (!optional) problems.push(`${where} lacks filter param ${key}`);
      continue;
    }
    problems.push(...paramProblems(params[key], spec, metric.name, `${where} ${key}`));
  }
  const extra = keys.filter((k) => !metric.filter_params.includes(k));
  if (extra.length > 0) problems.push(`${where} has unlisted filter params ${extra.join()}`);
  if (metric.emitted === "when_detected" && record.value_1 !== metric.value_1.max) {
    problems.push(`${where} when_detected record with value ${record.value_1}`);
  }
  const above = metric.above_range;
  if (above !== undefined && above.filter_param in params && record.value_1 !== above.reported_as) {
    problems.push(`${where} carries ${above.filter_param} but value ${record.value_1} is in range`);
  }
  return problems;
}

function readingProblems(reading: GeneratedReading, profile: Profile, offset: number, i: number) {
  const where = `reading ${i} (${reading.timestamp})`;
  const problems: string[] = [];
  if (reading.timestamp % MS_PER_MINUTE !== 0) problems.push(`${where} not on a whole minute`);
  if (reading.timestamp < DEFAULT_START || reading.timestamp >= DEFAULT_START + DAYS * MS_PER_DAY) {
    problems.push(`${where} outside the window`);
  }
  if (reading.timezone_offset !== offset)
    problems.push(`${where} offset ${reading.timezone_offset}`);
  if (reading.records.length === 0) problems.push(`${where} has no records`);
  const positions = reading.records.map((r) =>
    profile.metrics.findIndex((m) => m.name === r.metric),
  );
  if (positions.includes(-1)) problems.push(`${where} has a metric the profile lacks`);
  if (positions.some((p, j) => j > 0 && p <= positions[j - 1]!)) {
    problems.push(
      `${where} records not in profile order (or repeated): ${reading.records.map((r) => r.metric).join()}`,
    );
  }
  // A reading that is not an event carries every metric the profile emits always.
  const isEvent = reading.records.some(
    (r) => profile.metrics.find((m) => m.name === r.metric)?.emitted === "event",
  );
  if (!isEvent) {
    for (const m of profile.metrics.filter((m) => m.emitted === "always")) {
      if (!reading.records.some((r) => r.metric === m.name))
        problems.push(`${where} lacks ${m.name}`);
    }
  }
  reading.records.forEach((record, j) => {
    const metric = profile.metrics.find((m) => m.name === record.metric);
    if (metric !== undefined)
      problems.push(...recordProblems(record, metric, profile, `${where} ${record.metric}[${j}]`));
  });
  return problems;
}

/** Values of the reading's index keys (measurement_index, device_log_index): one per reading. */
function readingIndex(reading: GeneratedReading, profile: Profile): number | undefined | "mixed" {
  const keys = profile.filter_params.filter((f) => f.kind === "positive_integer").map((f) => f.key);
  const values = new Set(
    reading.records.flatMap((r) =>
      keys.filter((k) => r.filter_params?.[k] !== undefined).map((k) => r.filter_params![k]),
    ),
  );
  if (values.size > 1) return "mixed";
  return values.size === 0 ? undefined : (values.values().next().value as number);
}

describe.each(catalogue.profiles.map((p) => [p.name, p] as const))("%s", (_name, profile) => {
  it.each(patients.models.map((m) => [m.name, m] as const))(
    "generates records the profile accepts for a %s patient",
    (_model, patient) => {
      const readings = generate(profile.name, patient, { days: DAYS, duplicateRate: 0.05 });
      expect(readings.length).toBeGreaterThan(0);
      const problems = readings.flatMap((r, i) =>
        readingProblems(r, profile, patient.timezone_offset, i),
      );
      expect(problems.slice(0, 10)).toEqual([]);

      // One index per reading, going up by one per original reading (spec 2.8 measurement_index).
      const originals = readings.filter((r) => !r.duplicate);
      const indices = originals.map((r) => readingIndex(r, profile));
      expect(indices).not.toContain("mixed");
      const numbers = indices.filter((x): x is number => typeof x === "number");
      expect(numbers.every((x, i) => i === 0 || x === numbers[i - 1]! + 1)).toBe(true);
      // Time order of what the device took.
      expect(originals.every((r, i) => i === 0 || r.timestamp >= originals[i - 1]!.timestamp)).toBe(
        true,
      );
    },
  );
});

describe("device-specific rules of spec 2.8", () => {
  const byFamily = (family: Profile["family"]) =>
    catalogue.profiles.filter((p) => p.family === family);

  it.each(byFamily("inhaler_sensor").map((p) => [p.name]))(
    "%s: one serial number of 6–8 alphanumerics on every record",
    (name) => {
      const serials = new Set(
        generate(name, "copd").flatMap((r) =>
          r.records.map((rec) => rec.filter_params?.serial_number),
        ),
      );
      expect(serials.size).toBe(1);
      expect([...serials][0]).toMatch(/^[A-Za-z0-9]{6,8}$/);
    },
  );

  it.each(byFamily("inhaler_sensor").map((p) => [p.name]))(
    "%s: all eight metrics appear over a few months of use",
    (name) => {
      const seen = new Set(
        generate(name, "copd", { days: 200 }).flatMap((r) => r.records.map((x) => x.metric)),
      );
      expect([...seen].sort()).toEqual(profile_metrics(name));
    },
  );

  it.each(byFamily("proximity_band").map((p) => [p.name]))(
    "%s: beacon ids are 12 characters, events only at the companion's readings",
    (name) => {
      const bpm = byFamily("blood_pressure_monitor")[0]!.name;
      const readings = generate([bpm, name], "normal", { days: 60 });
      const band = readings.filter((r) => r.device === name);
      const cuff = readings.filter((r) => r.device === bpm);
      for (const id of band.flatMap((r) => r.records.map((x) => x.filter_params?.beacon_id))) {
        expect(id).toMatch(/^[0-9A-F]{12}$/);
      }
      expect(band.map((r) => r.timestamp)).toEqual(cuff.map((r) => r.timestamp));
      expect(new Set(band.flatMap((r) => r.records.map((x) => x.metric))).size).toBe(2);
    },
  );

  it.each(byFamily("medication_cap_sensor").map((p) => [p.name, p] as const))(
    "%s: syncs every 12 hours, each cycle reporting the dose taken or missed",
    (name, cap) => {
      const every = cap.cadence.kind === "interval" ? cap.cadence.every_hours : Number.NaN;
      expect(every).toBe(12);
      const readings = generate(name, "type2-diabetic", { days: 30 });
      const value = (r: GeneratedReading, metric: string) =>
        r.records.find((x) => x.metric === metric)?.value_1;
      const starts = readings.filter((r) => value(r, "capsensor_bluetooth_event") === 1);
      expect(starts.length).toBeGreaterThanOrEqual(59);
      for (let i = 1; i < starts.length; i++) {
        expect(starts[i]!.timestamp - starts[i - 1]!.timestamp).toBe(every * MS_PER_HOUR);
      }
      for (const r of starts) {
        const opened = value(r, "capsensor_open_close_event") === 1;
        const missed = value(r, "no_measurement_event") === 1;
        expect(opened !== missed).toBe(true);
      }
      const missed = starts.filter((r) => value(r, "no_measurement_event") === 1).length;
      expect(missed).toBeGreaterThan(0);
      expect(missed).toBeLessThan(starts.length / 2);
      // Every other reading closes the cycle: bluetooth 0 within a few minutes of its start.
      const ends = readings.filter((r) => value(r, "capsensor_bluetooth_event") === 0);
      expect(ends.length).toBeGreaterThanOrEqual(starts.length - 1);
      for (const [i, end] of ends.entries()) {
        expect(end.timestamp - starts[i]!.timestamp).toBeGreaterThan(0);
        expect(end.timestamp - starts[i]!.timestamp).toBeLessThanOrEqual(4 * MS_PER_MINUTE);
      }
    },
  );
});

function profile_metrics(name: string): string[] {
  return catalogue
    .get(name)
    .metrics.map((m) => m.name)
    .sort();
}
