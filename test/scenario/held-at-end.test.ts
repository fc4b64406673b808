import { describe, expect, it } from "vitest";
import { MS_PER_DAY, MS_PER_HOUR } from "../../src/core/time.ts";
import { parseScenario } from "../../src/scenario/load.ts";
import type { ProgressState } from "../../src/scenario/progress.ts";
import { renderText } from "../../src/scenario/report.ts";
import { runScenario } from "../../src/scenario/runner.ts";

/**
 * Readings a device or a gateway still holds when the run ends (README "Running scenarios"):
 * nothing went wrong in the lab, the run just ended before they could go. They count as
 * held_at_end, not missing (a fault of the lab, which fails a run).
 */
const run = async (name: string, body: string, onProgress?: (state: ProgressState) => void) => {
  const text = `scenario: ${name}
seed: 1
clock: { start: 2026-01-05T00:00:00Z }
${body}`;
  const progress = onProgress && { update: onProgress, done: onProgress };
  return runScenario(parseScenario(text, `/scenarios/${name}.yaml`), progress && { progress });
};

describe("readings held at the end of a run", () => {
  for (const [connectivity, kit, fault, ble] of [
    ["gateway", "Vendor BPM - Wide Range", "device.out_of_range", "direct"],
    ["gateway", "Vendor BPM - Wide Range", "device.out_of_range", "emulated"],
    ["gateway", "Vendor BPM - Wide Range", "gateway.outage", "direct"],
    ["cellular", "Vendor Cellular BPM", "cellular.outage", "direct"],
  ] as const) {
    it(`${fault} lasting past the drain${connectivity === "gateway" ? ` (${ble} BLE)` : ""}: what the ${fault.startsWith("device") ? "device" : "outbox"} still holds counts held_at_end, not missing`, async () => {
      // Out from day 1 12:00 for 5 days: the 20:00 reading of day 1 and the three of day 2
      // wait in the device or the outbox when the run's day of drain ends.
      const report = await run(
        "held-at-end",
        `duration: 3d
transports: { ble: ${ble} }
accounts: [{ id: clinic }]
cohorts:
  - { id: p, account: clinic, count: 1, model: hypertensive, kit: [${kit}], connectivity: ${connectivity}, adherence: 1, schedule: ["06:00", "12:00", "20:00"] }
events:
  - { at: 1d 12:30, action: ${fault}, target: p, for: 5d }
expect:
  - readings: { missing: 0, held_at_end: 4 }
`,
      );
      expect(report.counts.readings, renderText(report)).toMatchObject({
        taken: 9,
        stored: 5,
        held_at_end: 4,
        missing: 0,
      });
      expect(report.passed, renderText(report)).toBe(true);
      expect(renderText(report)).toContain("held_at_end 4");
    }, 60_000);
  }

  it("readings stranded on a device out of range when its gateway is unlinked are held on it at the end, and the run drains its two hours, not a day", async () => {
    // Out of reach from 05:00 to 17:00: the cuff keeps its 06:00 and 12:00 readings; the
    // patient is unenrolled at 14:00 (spec 4.2) and measures no more; no gateway reads them.
    // Nothing can send them, so the run does not wait the day it gives readings that can.
    let lastNow = 0;
    const report = await run(
      "stranded",
      `duration: 2d
accounts: [{ id: clinic }]
cohorts:
  - { id: p, account: clinic, count: 1, model: hypertensive, kit: [Vendor BPM - Wide Range], connectivity: gateway, adherence: 1, schedule: ["06:00", "12:00", "20:00"] }
events:
  - { at: 0d 05:00, action: device.out_of_range, target: p, for: 12h }
  - { at: 0d 14:00, action: gateway.unlink, target: p }
expect:
  - readings: { missing: 0, held_at_end: 2 }
`,
      (state) => {
        lastNow = state.virtualNow;
      },
    );
    const end = Date.parse("2026-01-05T00:00:00Z") + 2 * MS_PER_DAY;
    expect(new Date(lastNow).toISOString()).toBe(new Date(end + 2 * MS_PER_HOUR).toISOString());
    expect(report.counts.readings, renderText(report)).toMatchObject({
      taken: 2,
      stored: 0,
      held_at_end: 2,
      missing: 0,
    });
    expect(report.passed, renderText(report)).toBe(true);
  }, 60_000);
});

describe("readings a full store dropped", () => {
  for (const [connectivity, kit, fault] of [
    ["gateway", "Vendor BPM - Wide Range", "device.out_of_range"],
    ["cellular", "Vendor Cellular BPM", "cellular.outage"],
  ] as const) {
    it(`a ${connectivity} device out of reach until past the end: its store keeps the newest 1000, the older ones it dropped count dropped_full, not missing`, async () => {
      // Every half hour for 22 days, out of reach from the first hour on: 1000 fit in the
      // device's store (its modem's outbox), the older ones are dropped, as meters do.
      const schedule = Array.from(
        { length: 48 },
        (_, i) => `"${String(Math.floor(i / 2)).padStart(2, "0")}:${i % 2 === 0 ? "00" : "30"}"`,
      );
      const report = await run(
        "dropped-full",
        `duration: 22d
accounts: [{ id: clinic }]
cohorts:
  - { id: p, account: clinic, count: 1, model: hypertensive, kit: [${kit}], connectivity: ${connectivity}, adherence: 1, schedule: [${schedule.join(", ")}] }
events:
  - { at: 0d 00:45, action: ${fault}, target: p, for: 30d }
expect:
  - readings: { missing: 0, dropped_full: ">= 1" }
`,
      );
      const r = report.counts.readings;
      expect(r.missing, renderText(report)).toBe(0);
      // Re-sends take room in the store too: at most 1000 of the readings are still held.
      expect(r.held_at_end, renderText(report)).toBeGreaterThan(900);
      expect(r.held_at_end, renderText(report)).toBeLessThanOrEqual(1000);
      expect(r.dropped_full, renderText(report)).toBe(r.taken - r.stored - r.held_at_end);
      expect(r.dropped_full, renderText(report)).toBeGreaterThan(0);
      expect(report.passed, renderText(report)).toBe(true);
    }, 120_000);
  }
});
