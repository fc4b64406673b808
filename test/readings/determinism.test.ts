import { afterEach, describe, expect, it, vi } from "vitest";
import { MS_PER_DAY } from "../../src/core/time.ts";
import { apiView } from "../../src/readings/api-view.ts";
import { DEFAULT_START } from "../../src/readings/generate.ts";
import { catalogue, generate } from "./helpers.ts";

const BPM = "Vendor BPM - Wide Range";
const everyDevice = catalogue.profiles.map((p) => p.name);

describe("determinism", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("gives the same output for the same seed and a different one for another seed", () => {
    const a = generate(everyDevice, "heart-failure", { seed: 42, days: 14, duplicateRate: 0.05 });
    const b = generate(everyDevice, "heart-failure", { seed: 42, days: 14, duplicateRate: 0.05 });
    const c = generate(everyDevice, "heart-failure", { seed: 43, days: 14, duplicateRate: 0.05 });
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(JSON.stringify(a)).not.toBe(JSON.stringify(c));
    expect(a.length).toBeGreaterThan(100);
  });

  it("gives two patient models printed with the same seed their own patient, devices and days", () => {
    // `rpmlab readings` with the default seed for two models: two patients a platform can load
    // side by side, not one patient_id and device holding both, missing readings on the same days.
    const view = (patient: string) =>
      apiView({ device: "Vendor Scale", patient, seed: 1, days: 90, duplicateRate: 0 }).records;
    const normal = view("normal");
    const hypertensive = view("hypertensive");
    for (const field of ["patient_id", "hwi_device_id", "hardware_uuid"] as const) {
      expect(normal[0]![field], field).not.toBe(hypertensive[0]![field]);
    }
    const daysWithout = (records: typeof normal) => {
      const read = new Set(records.map((r) => r.timestamp.slice(0, 10)));
      const all = Array.from({ length: 90 }, (_, d) =>
        new Date(DEFAULT_START + d * MS_PER_DAY).toISOString().slice(0, 10),
      );
      return all.filter((day) => !read.has(day));
    };
    const normalGaps = daysWithout(normal);
    const hypertensiveGaps = daysWithout(hypertensive);
    expect(normalGaps.length).toBeGreaterThan(0);
    // Drawn from one stream, the rarer model's gaps were all among the other's.
    expect(normalGaps.filter((day) => !hypertensiveGaps.includes(day)).length).toBeGreaterThan(0);
  });

  it("never reads the wall clock or Math.random", () => {
    const random = vi.spyOn(Math, "random");
    const now = vi.spyOn(Date, "now");
    generate(everyDevice, "copd", { days: 7, duplicateRate: 0.1 });
    expect(random).not.toHaveBeenCalled();
    expect(now).not.toHaveBeenCalled();
  });

  it("does not change a device's readings when other devices are added to the patient", () => {
    const alone = generate(BPM, "hypertensive", { seed: 5, days: 30, duplicateRate: 0.05 });
    const withOthers = generate(
      ["Vendor Scale", BPM, "Vendor Glucometer", "Vendor Proximity Band", "Vendor Inhaler Sensor"],
      "hypertensive",
      { seed: 5, days: 30, duplicateRate: 0.05 },
    ).filter((r) => r.device === BPM);
    expect(withOthers).toEqual(alone);
  });

  it("does not change values when only the duplicate rate changes", () => {
    const none = generate(BPM, "normal", { duplicateRate: 0 });
    const some = generate(BPM, "normal", { duplicateRate: 0.3 }).filter((r) => !r.duplicate);
    expect(some).toEqual(none);
  });

  it("extends a shorter run: the first days of a longer run are the shorter run", () => {
    const short = generate(everyDevice, "copd", { days: 10, duplicateRate: 0.05 });
    const long = generate(everyDevice, "copd", { days: 25, duplicateRate: 0.05 });
    const cut = DEFAULT_START + 10 * MS_PER_DAY;
    // Cycle ends (a few minutes after a cycle start) may spill over the cut; compare before it.
    // Re-sends are left out: one of an early reading may be sent after a reading past the cut.
    const firstDays = (rs: typeof short) =>
      rs.filter((r) => !r.duplicate && r.timestamp < cut - 10 * 60_000);
    expect(firstDays(long)).toEqual(firstDays(short));
  });

  it("shifts with the start instant instead of reading the clock", () => {
    const later = DEFAULT_START + 100 * MS_PER_DAY;
    const readings = generate(BPM, "normal", { start: later, days: 3 });
    expect(readings[0]!.timestamp).toBeGreaterThanOrEqual(later);
    expect(readings.at(-1)!.timestamp).toBeLessThan(later + 3 * MS_PER_DAY);
  });
});
