import { describe, expect, it } from "vitest";
import { dropStored } from "../../src/readings/dedupe.ts";
import { generate } from "./helpers.ts";

describe("re-sent readings", () => {
  it("are re-sent at roughly the configured rate, unchanged, after their original", () => {
    const readings = generate(["Vendor BPM - S", "Vendor Inhaler Sensor"], "copd", {
      days: 120,
      duplicateRate: 0.2,
    });
    const originals = readings.filter((r) => !r.duplicate);
    const duplicates = readings.filter((r) => r.duplicate);
    const share = duplicates.length / originals.length;
    expect(share).toBeGreaterThan(0.15);
    expect(share).toBeLessThan(0.25);
    for (const [i, d] of readings.entries()) {
      if (!d.duplicate) continue;
      // The same reading object content as an earlier original of the same device.
      const earlier = readings
        .slice(0, i)
        .filter((o) => !o.duplicate && o.device === d.device && o.timestamp === d.timestamp);
      expect(earlier).toHaveLength(1);
      expect({ ...d, duplicate: false }).toEqual(earlier[0]);
    }
  });

  it("are not produced at rate 0", () => {
    expect(
      generate("Vendor Glucometer", "normal", { days: 60, duplicateRate: 0 }).some(
        (r) => r.duplicate,
      ),
    ).toBe(false);
  });

  it("are exactly what the API's dedupe drops (device, metric, timestamp, index)", () => {
    const readings = generate(
      ["Vendor Pulse Ox", "Vendor Inhaler Sensor", "Vendor Scale"],
      "normal",
      {
        days: 90,
        duplicateRate: 0.1,
      },
    );
    const { readings: kept, droppedReadings, droppedRecords } = dropStored(readings);
    const duplicates = readings.filter((r) => r.duplicate);
    expect(duplicates.length).toBeGreaterThan(5);
    expect(kept).toEqual(readings.filter((r) => !r.duplicate));
    expect(droppedReadings).toBe(duplicates.length);
    expect(droppedRecords).toBe(duplicates.reduce((n, r) => n + r.records.length, 0));
  });
});
