import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadScenario, parseScenario } from "../../src/scenario/load.ts";
import { renderText } from "../../src/scenario/report.ts";
import { runScenario } from "../../src/scenario/runner.ts";

const ACTIONS = fileURLToPath(new URL("../fixtures/scenarios/actions.yaml", import.meta.url));

/**
 * The actions no shipped scenario uses (battery dead, radio interference, api.activate_device,
 * api.request), on a run small enough to count by hand: every device is used at 08:00, 12:00
 * and 18:00 with full adherence, for three days.
 */
describe("scenario actions", () => {
  it("take effect as a patient and a platform would see them", async () => {
    const report = await runScenario(loadScenario(ACTIONS));
    const text = renderText(report);
    expect(report.passed, text).toBe(true);
    expect(report.counts.readings, text).toMatchObject({
      // Cuff: 9 scheduled, the 3 of day 0 after its battery died at 06:00 not taken (6).
      // Peak flow meter: 9. First glucometer: 9. The second, activated at 1d 12:30: 18:00 on
      // day 1 and three on day 2 (4).
      taken: 6 + 9 + 9 + 4,
      // Interference 1d 06:00–20:00 takes the gateway's devices out of reach: the cuff keeps its
      // readings and sends them later; the peak flow meter cannot store, so its three are lost.
      lost_by_design: 3,
      stored: 28 - 3,
      missing: 0,
    });
    expect(report.faults).toBe(2);
  }, 60_000);

  it("stores a reading re-sent after a gateway set its drifted device's clock once", async () => {
    // Devices re-send some readings unchanged (readings/duplicates.ts). A Pulse Ox 7 minutes
    // fast is set right by its gateway at the first connection of the day; a reading it sends
    // again after that keeps the stamp it had the first time, so ingestion knows it.
    const text = `scenario: drift
seed: 1
clock: { start: 2026-01-05T00:00:00Z }
duration: 2d
accounts: [{ id: clinic }]
cohorts:
  - { id: gw, account: clinic, count: 2, model: hypertensive, kit: [Vendor BPM - Wide Range, Vendor Scale, Vendor Pulse Ox], connectivity: gateway, adherence: 1, schedule: ["08:00", "14:00", "20:00"] }
events:
  - { at: 0d 07:00, action: device.clock_drift, target: gw, drift: "+7m" }
`;
    const report = await runScenario(parseScenario(text, "/scenarios/drift.yaml"));
    expect(report.counts.readings, renderText(report)).toMatchObject({
      taken: 36,
      stored: 36,
      missing: 0,
      duplicates_stored: 0,
      duplicates_suppressed: 2,
    });
  }, 60_000);

  it("device.duplicate_burst sends a device's last `count` readings again, once each", async () => {
    // README "Actions": the cuff and the peak flow meter re-send their last two readings (count
    // 2), the cellular cuff its two (count 5: it has taken only two by then); ingestion drops all
    // six. The peak flow meter cannot store: its second re-send found a gateway visit already on
    // its way and took it for none, so it lost both.
    const text = (events: string) => `scenario: burst
seed: 2
clock: { start: 2026-01-05T00:00:00Z }
duration: 1d
accounts: [{ id: clinic }]
cohorts:
  - { id: gw, account: clinic, count: 1, model: hypertensive, kit: [Vendor BPM - Wide Range, Vendor Peak Flow Meter], connectivity: gateway, adherence: 1, schedule: ["08:00", "12:00", "18:00"] }
  - { id: cell, account: clinic, count: 1, model: hypertensive, kit: [Vendor Cellular BPM], connectivity: cellular, adherence: 1, schedule: ["08:00", "12:00", "18:00"] }
${events}`;
    const quiet = await runScenario(parseScenario(text(""), "/scenarios/burst.yaml"));
    const burst = await runScenario(
      parseScenario(
        text(`events:
  - { at: "13:00", action: device.duplicate_burst, target: gw, count: 2 }
  - { at: "13:00", action: device.duplicate_burst, target: cell, count: 5 }
`),
        "/scenarios/burst.yaml",
      ),
    );
    expect(burst.counts.readings, renderText(burst)).toEqual({
      ...quiet.counts.readings,
      duplicates_suppressed: quiet.counts.readings.duplicates_suppressed + 2 + 2 + 2,
    });
    expect(burst.counts.readings.duplicates_stored).toBe(0);
    expect(burst.faults).toBe(2);
  }, 60_000);

  it("lists an event the lab refuses as a failed check and runs on; api.request may expect an error status", async () => {
    const text = `scenario: refused
seed: 1
clock: { start: 2026-01-05T00:00:00Z }
duration: 1d
accounts: [{ id: a }]
cohorts: [{ id: gw, account: a, count: 1, model: hypertensive, kit: [Vendor Scale], connectivity: gateway }]
events:
  - { at: 04:00, action: api.request, account: a, method: POST, path: /hwi/hwi-patients/, body: { name: Nobody } }
  - { at: 05:00, action: api.request, account: a, method: GET, path: /hwi/hwi-patients/nobody/, status: 404 }
  - { at: 06:00, action: api.request, account: a, method: GET, path: /hwi/hwi-patients/nobody/ }
expect:
  - readings: { missing: 0 }
`;
    const report = await runScenario(parseScenario(text, "/scenarios/refused.yaml"));
    expect(report.passed).toBe(false);
    expect(report.expectations).toMatchObject([
      {
        source: "events[0]",
        passed: false,
        text: "api.request at 04:00 takes effect",
        actual: expect.stringMatching(/^POST \/hwi\/hwi-patients\/: 400 .*external_id/),
      },
      {
        source: "events[2]",
        passed: false,
        actual: expect.stringMatching(/^GET \/hwi\/hwi-patients\/nobody\/: 404 /),
      },
      { source: "expect[0]", passed: true },
    ]);
    // The day ran to its end: the scale's readings were taken after the refusal.
    expect(report.counts.readings.taken).toBeGreaterThan(0);
  }, 60_000);

  it("refuses what an ordered kit still in its box cannot do: a device fault, activating beside it", async () => {
    const text = `scenario: boxed
seed: 1
clock: { start: 2026-01-05T00:00:00Z }
duration: 1d
accounts: [{ id: a }]
cohorts: [{ id: gw, account: a, count: 1, model: hypertensive, kit: [Vendor BPM - Wide Range, Vendor Inhaler Sensor], connectivity: gateway, onboarding: ordered }]
events:
  - { at: 01:00, action: device.out_of_range, target: gw, for: 2h }
  - { at: 01:00, action: api.activate_device, target: gw, device: Vendor Inhaler Sensor }
expect:
  - readings: { missing: 0 }
`;
    const report = await runScenario(parseScenario(text, "/scenarios/boxed.yaml"));
    expect(report.passed).toBe(false);
    expect(report.expectations).toMatchObject([
      {
        source: "events[0]",
        passed: false,
        actual:
          "device.out_of_range on gw[0]: none of its 2 devices is on yet (an ordered kit powers on when it is delivered)",
      },
      {
        source: "events[1]",
        passed: false,
        actual: expect.stringMatching(/the patient has no gateway yet .*order the device instead$/),
      },
      { source: "expect[0]", passed: true },
    ]);
  }, 60_000);

  it("refuses a link fault or an unlink of hardware still in its box", async () => {
    // Before, each did nothing and counted as a fault: a drill that passed without its outage.
    const text = `scenario: boxed-links
seed: 1
clock: { start: 2026-01-05T00:00:00Z }
duration: 1d
accounts: [{ id: a }]
cohorts:
  - { id: gw, account: a, count: 1, model: hypertensive, kit: [Vendor BPM - Wide Range], connectivity: gateway, onboarding: ordered }
  - { id: cell, account: a, count: 2, model: hypertensive, kit: [Vendor Cellular BPM], connectivity: cellular, onboarding: ordered }
events:
  - { at: 01:00, action: gateway.outage, target: gw, for: 2h }
  - { at: 01:00, action: cellular.outage, target: cell, for: 2h }
  - { at: 02:00, action: gateway.unlink, target: "gw[0]" }
`;
    const report = await runScenario(parseScenario(text, "/scenarios/boxed-links.yaml"));
    const boxed = "(an ordered kit powers on when it is delivered)";
    expect(report.expectations).toMatchObject([
      {
        source: "events[0]",
        passed: false,
        actual: `gateway.outage on gw[0]: none of its 1 patients has a gateway on yet ${boxed}`,
      },
      {
        source: "events[1]",
        passed: false,
        actual: `cellular.outage on cell[0-1]: none of its 2 devices is on yet ${boxed}`,
      },
      {
        source: "events[2]",
        passed: false,
        actual: `gateway.unlink on gw[0]: none of its 1 patients has a gateway on yet ${boxed}`,
      },
    ]);
    expect(report.passed).toBe(false);
    // None ran: the report's faults count only those that did (it counted all three).
    expect(report.faults).toBe(0);
  }, 60_000);

  it("refuses broker faults on an external broker before anything runs", async () => {
    const file = fileURLToPath(new URL("../../scenarios/broker-chaos.yaml", import.meta.url));
    const text = readFileSync(file, "utf8").replace(
      "duration: 3d",
      "duration: 3d\ntransports:\n  broker: mqtt://127.0.0.1:1",
    );
    await expect(runScenario(parseScenario(text, file))).rejects.toMatchObject({
      // The file asks for what no run can do (rpmlab run: exit 2), not a lab that failed.
      code: "E_SCENARIO_INVALID",
      message: expect.stringContaining("events[0] broker.restart"),
    });
  });
});
