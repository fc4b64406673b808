/** post_as_array's "physical reading" (wire-formats): which records go in one array. */
import { describe, expect, it } from "vitest";
import type { MeasurementRow } from "../../src/store/types-ingest.ts";
import { byReading } from "../../src/webhooks/payloads/measurement.ts";

const T = Date.UTC(2026, 2, 2, 8);
let id = 0;
function row(metric: string, over: Partial<MeasurementRow> = {}): MeasurementRow {
  return {
    id: ++id,
    accountId: "a",
    deviceId: "scale-1",
    deviceName: "Vendor Scale",
    patientExternalId: "P-1",
    source: "F01122334455",
    hardwareUuid: "297056120BD7",
    sensorCode: "34",
    sensorId: null,
    metric,
    value1: 1,
    value2: null,
    timestamp: T,
    timezoneOffset: 0,
    estimatedTimestamp: false,
    filterParams: null,
    measurementIndex: null,
    deviceLogIndex: null,
    messageId: "m-1",
    characteristicUuid: null,
    raw: null,
    created: T,
    ...over,
  };
}
const metrics = (groups: MeasurementRow[][]) => groups.map((g) => g.map((r) => r.metric));

describe("byReading", () => {
  it("puts a reading's records together, readings of other times and indexes apart", () => {
    const groups = byReading([
      row("blood_pressure", { measurementIndex: 7 }),
      row("pulse", { measurementIndex: 7 }),
      row("blood_pressure", { measurementIndex: 8 }),
      row("pulse", { measurementIndex: 7 }),
      row("weight", { timestamp: T + 60_000 }),
    ]);
    expect(metrics(groups)).toEqual([
      ["blood_pressure", "pulse"],
      ["blood_pressure"],
      ["pulse"],
      ["weight"],
    ]);
  });

  it("keeps apart readings an unset clock stored at one receive time: a metric twice starts the next", () => {
    const estimated = { estimatedTimestamp: true };
    const groups = byReading([
      row("weight", estimated),
      row("battery_percentage", estimated),
      row("weight", estimated),
      row("battery_percentage", estimated),
      row("weight", estimated),
    ]);
    expect(metrics(groups)).toEqual([
      ["weight", "battery_percentage"],
      ["weight", "battery_percentage"],
      ["weight"],
    ]);
  });
});
