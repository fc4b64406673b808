import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, scenarioDigest } from "../../src/scenario/digest.ts";

const measurements: Record<string, unknown>[] = [
  {
    id: "m1",
    metric_type: "systolic",
    value_1: 128,
    timestamp: "2026-01-05T08:00:00.000000Z",
    filter_params: { measurement_index: 1, irregular: false },
  },
  { id: "m2", metric_type: "diastolic", value_1: 82, timestamp: "2026-01-05T08:00:00.000000Z" },
  { id: "m3", metric_type: "weight", value_1: 81.4, timestamp: "2026-01-06T07:12:00.000000Z" },
];
const bodies = [
  '{"event":"MEASUREMENT","data":{"id":"m1","value_1":128}}',
  '[{"id":"m2"},{"id":"m3"}]',
  "not json at all",
];

function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([k, v]) => [k, reverseKeys(v)]),
  );
}

describe("scenarioDigest", () => {
  const base = scenarioDigest(measurements, bodies);

  it("is sha256 hex", () => {
    expect(base).toMatch(/^[0-9a-f]{64}$/);
  });

  it("does not depend on the order of measurements, bodies or object keys", () => {
    fc.assert(
      fc.property(
        fc.shuffledSubarray(measurements, { minLength: 3, maxLength: 3 }),
        fc.shuffledSubarray(bodies, { minLength: 3, maxLength: 3 }),
        fc.boolean(),
        (ms, bs, reverse) => {
          const input = reverse ? ms.map((m) => reverseKeys(m) as Record<string, unknown>) : ms;
          expect(scenarioDigest(input, bs)).toBe(base);
        },
      ),
    );
  });

  it("reads webhook bodies as JSON: spacing and key order do not count", () => {
    const respaced = [
      '{ "data": { "value_1": 128, "id": "m1" }, "event": "MEASUREMENT" }',
      '[ {"id":"m2"}, {"id":"m3"} ]',
      "not json at all",
    ];
    expect(scenarioDigest(measurements, respaced)).toBe(base);
  });

  it("changes when any value changes", () => {
    const changed = measurements.map((m, i) => (i === 2 ? { ...m, value_1: 81.5 } : m));
    expect(scenarioDigest(changed, bodies)).not.toBe(base);
    const nested = measurements.map((m, i) =>
      i === 0 ? { ...m, filter_params: { measurement_index: 2, irregular: false } } : m,
    );
    expect(scenarioDigest(nested, bodies)).not.toBe(base);
    expect(scenarioDigest(measurements, [...bodies.slice(0, 2), "not json at al1"])).not.toBe(base);
    // Array order inside a record is data, not presentation.
    expect(
      scenarioDigest(measurements, [
        bodies[0] as string,
        '[{"id":"m3"},{"id":"m2"}]',
        bodies[2] as string,
      ]),
    ).not.toBe(base);
  });

  it("counts repeats and keeps the two lists apart", () => {
    expect(
      scenarioDigest([...measurements, measurements[0] as Record<string, unknown>], bodies),
    ).not.toBe(base);
    expect(scenarioDigest(measurements, [...bodies, bodies[0] as string])).not.toBe(base);
    expect(scenarioDigest([{ a: 1 }], [])).not.toBe(scenarioDigest([], ['{"a":1}']));
    expect(scenarioDigest([], ["a\n1:b"])).not.toBe(scenarioDigest([], ["a", "b"]));
  });
});

describe("canonicalJson", () => {
  it("sorts keys at every depth and writes dates and bigints as JSON would", () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null }, u: undefined })).toBe(
      '{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}',
    );
    expect(canonicalJson({ at: new Date(Date.UTC(2026, 0, 5)), n: 10n })).toBe(
      '{"at":"2026-01-05T00:00:00.000Z","n":"10"}',
    );
  });
});
