import { describe, expect, it } from "vitest";
import { parseScenario } from "../../src/scenario/load.ts";
import type { ScenarioReport } from "../../src/scenario/report.ts";
import { renderText } from "../../src/scenario/report.ts";
import { runScenario } from "../../src/scenario/runner.ts";

/**
 * README "Events": `for` is how long each fault lasts. A shorter fault of the same kind inside a
 * longer one must not end the longer one: the run with both counts what the run with the
 * longer one alone counts.
 */
const BASE = `scenario: overlap
seed: 3
clock: { start: 2026-01-05T00:00:00Z }
duration: 2d
accounts:
  - id: clinic
    webhooks: [{ id: main, events: [MEASUREMENT], url: lab }]
cohorts:
  - { id: gw, account: clinic, count: 2, model: hypertensive, kit: [Vendor BPM - Wide Range, Vendor Peak Flow Meter], connectivity: gateway, adherence: 1, schedule: ["08:00", "12:00", "18:00"] }
events:
`;

/** The readings of 12:00 wait in the gateways until the broker is back at 18:00. */
const NOTHING_RECEIVED_WHILE_DOWN = `expect:
  - api: { account: clinic, get: "/hwi/patients/gw-0001/measurements/?created__gte=2026-01-05T08:30:00Z&created__lt=2026-01-05T17:59:00Z&page=1", count: 0 }
`;

async function run(events: string): Promise<ScenarioReport> {
  return runScenario(parseScenario(`${BASE}${events}`, "/scenarios/overlap.yaml"));
}

describe("overlapping faults", () => {
  it("a short fault inside a longer one of the same kind leaves the longer one in force to its end", async () => {
    const cases: [string, string, string][] = [
      [
        "broker",
        `  - { at: 0d 06:00, action: broker.outage, for: 12h }\n`,
        `  - { at: 0d 07:00, action: broker.outage, for: 1h }\n  - { at: 0d 09:00, action: broker.restart }\n${NOTHING_RECEIVED_WHILE_DOWN}`,
      ],
      [
        "webhook",
        `  - { at: 0d 00:30, action: webhook.down, webhook: main, for: 36h }\n`,
        `  - { at: 0d 02:00, action: webhook.error, webhook: main, status: 503, for: 1h }\n`,
      ],
      [
        "devices",
        `  - { at: 0d 06:00, action: device.out_of_range, target: gw, for: 1d }\n  - { at: 0d 07:00, action: device.battery_dead, target: "gw[1]", device: Vendor BPM - Wide Range }\n`,
        `  - { at: 0d 07:00, action: radio.interference, target: gw, loss: 1, for: 1h }\n  - { at: 0d 07:30, action: device.out_of_range, target: gw, for: 1h }\n  - { at: 0d 07:30, action: device.battery_dead, target: "gw[1]", device: Vendor BPM - Wide Range, for: 1h }\n`,
      ],
    ];
    for (const [name, outer, inner] of cases) {
      const alone = await run(outer);
      const both = await run(outer + inner);
      expect.soft(both.passed, `${name}: ${renderText(both)}`).toBe(true);
      expect
        .soft(both.counts.readings, `${name}: ${renderText(both)}`)
        .toEqual(alone.counts.readings);
      expect
        .soft(both.counts.webhooks, `${name}: ${renderText(both)}`)
        .toEqual(alone.counts.webhooks);
    }
  }, 120_000);

  it("on emulated BLE too: interference inside longer interference ends with the longer one", async () => {
    // The medium's loss around a household was set to 0 when the inner interference ended, with
    // the outer one still on: the peak flow meter (it cannot store) then sent its 12:00 reading.
    const emulated = (events: string) =>
      runScenario(
        parseScenario(
          `${BASE.replace("duration: 2d", "duration: 1d\ntransports: { ble: emulated }")}${events}`,
          "/scenarios/overlap.yaml",
        ),
      );
    const outer = `  - { at: 0d 06:00, action: radio.interference, target: gw, loss: 1, for: 12h }\n`;
    const inner = `  - { at: 0d 07:00, action: radio.interference, target: "gw[0]", loss: 1, for: 1h }\n  - { at: 0d 07:00, action: radio.interference, loss: 1, for: 1h }\n`;
    const alone = await emulated(outer);
    const both = await emulated(outer + inner);
    expect(alone.counts.readings.lost_by_design, renderText(alone)).toBeGreaterThan(0);
    expect(both.counts.readings, renderText(both)).toEqual(alone.counts.readings);
  }, 120_000);
});
