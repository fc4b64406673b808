import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { apiView } from "../../src/readings/api-view.ts";

/**
 * Same seed, same output, byte for byte: the rendered records of a few device / patient / seed
 * combinations are pinned in readings.golden.json. After an intended change to the generators,
 * a profile or a patient model, regenerate and review the diff:
 *
 *   UPDATE_GOLDEN=1 npx vitest run test/golden
 */

const GOLDEN = fileURLToPath(new URL("./readings.golden.json", import.meta.url));
// Tests may read the environment (src/ may not, outside src/config); only this switch is read.
const UPDATE = process.env.UPDATE_GOLDEN === "1";

const CASES = [
  { device: "Vendor BPM - Wide Range", patient: "hypertensive", seed: 1, days: 3 },
  { device: "Vendor Scale", patient: "heart-failure", seed: 2, days: 5 },
  { device: "Vendor Glucometer", patient: "type2-diabetic", seed: 3, days: 2 },
  { device: "Vendor Inhaler Sensor", patient: "copd", seed: 4, days: 2 },
  { device: "Vendor Fetal Doppler", patient: "pregnancy", seed: 5, days: 3 },
  { device: "Vendor Cellular Pulse Ox", patient: "copd", seed: 6, days: 2 },
  { device: "Vendor Medication Cap", patient: "normal", seed: 7, days: 2 },
  { device: "Vendor Proximity Band", patient: "normal", seed: 8, days: 3 },
] as const;

const label = (c: (typeof CASES)[number]) =>
  `${c.device} | ${c.patient} | seed ${c.seed} | ${c.days} days`;

function render(): string {
  const out: Record<string, unknown> = {};
  for (const c of CASES) {
    // Re-sends included (at a raised rate) so the golden file pins them too.
    out[label(c)] = apiView({ ...c, duplicateRate: 0.1, includeDuplicates: true }).records;
  }
  return `${JSON.stringify(out, null, 2)}\n`;
}

describe("golden readings", () => {
  it("renders exactly the committed output", () => {
    const actual = render();
    if (UPDATE) writeFileSync(GOLDEN, actual);
    expect(
      existsSync(GOLDEN),
      `${GOLDEN} is missing: run UPDATE_GOLDEN=1 npx vitest run test/golden`,
    ).toBe(true);
    const expected = readFileSync(GOLDEN, "utf8");
    // Compare case by case first, so a failure names the combination that changed.
    const a = JSON.parse(actual) as Record<string, unknown>;
    const e = JSON.parse(expected) as Record<string, unknown>;
    expect(Object.keys(a)).toEqual(Object.keys(e));
    for (const key of Object.keys(e)) expect(a[key], key).toEqual(e[key]);
    expect(actual).toBe(expected);
  });

  it("covers a re-sent reading and every case has records", () => {
    const golden = JSON.parse(readFileSync(GOLDEN, "utf8")) as Record<
      string,
      Array<{ timestamp: string; metric: string }>
    >;
    for (const c of CASES) expect(golden[label(c)]!.length, label(c)).toBeGreaterThan(0);
    const repeats = Object.values(golden).some((records) => {
      const keys = records.map((r) => `${r.metric}/${r.timestamp}`);
      return new Set(keys).size < keys.length;
    });
    expect(repeats).toBe(true);
  });
});
