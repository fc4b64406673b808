import { describe, expect, it } from "vitest";
import { Rng } from "../../src/core/rng.ts";
import { parseIso } from "../../src/core/time.ts";
import type { GeneratedReading } from "../../src/readings/generated.ts";
import { drawImei, luhnCheckDigit, resolveIdentities } from "../../src/readings/identity.ts";
import { isoWithMicros, renderReadings } from "../../src/readings/render.ts";
import { generate, profile } from "./helpers.ts";

const BPM = "Vendor BPM - Wide Range";
const at = (iso: string) => parseIso(iso)!;

/** The wire-formats.md sample reading: a BPM reading of 587 with pulse 86. */
const sample: GeneratedReading = {
  device: BPM,
  timestamp: at("2024-10-16T04:10:00Z"),
  timezone_offset: -4,
  records: [
    {
      metric: "blood_pressure",
      value_1: 128,
      value_2: 84,
      filter_params: { measurement_index: 587 },
    },
    { metric: "pulse", value_1: 86, value_2: null, filter_params: { measurement_index: 587 } },
  ],
  duplicate: false,
};

const identity = {
  patientId: "5383853",
  gatewayId: "297056120BD7",
  devices: { [BPM]: { hwi_device_id: "e9c24a26-7d69-490f-9546-93c5a31486aa" } },
};

describe("rendering records as the API shows them", () => {
  it("matches the documented measurement record field for field", () => {
    const records = renderReadings([sample], {
      profiles: [profile(BPM)],
      rng: new Rng("render"),
      firstId: 101,
      identity,
    });
    expect(records).toHaveLength(2);
    expect(records[1]).toStrictEqual({
      id: 102,
      metric_type: "pulse",
      metric: "pulse",
      device_name: "Vendor BPM - Wide Range",
      hwi_device_id: "e9c24a26-7d69-490f-9546-93c5a31486aa",
      patient_id: "5383853",
      hardware_uuid: "297056120BD7",
      sensor_code: "10",
      value_1: "86.00",
      value_2: "0.00",
      created: "2024-10-16T04:10:18.330491Z",
      timestamp: "2024-10-16T04:10:00.000000Z",
      timezone_offset: -4,
      estimated_timestamp: false,
      filter_params: { measurement_index: 587 },
    });
    expect(records[0]).toMatchObject({
      id: 101,
      metric: "blood_pressure",
      value_1: "128.00",
      value_2: "84.00",
    });
    // One upload: every record of a reading has the same receipt time.
    expect(records[0]!.created).toBe(records[1]!.created);
  });

  it("formats decimals with two places and keeps filter_params null when there are none", () => {
    const reading: GeneratedReading = {
      device: "Vendor Scale",
      timestamp: at("2026-01-01T12:00:00Z"),
      timezone_offset: -5,
      records: [
        { metric: "weight", value_1: 172.4, value_2: null, filter_params: null },
        { metric: "battery_percentage", value_1: 0, value_2: null, filter_params: null },
      ],
      duplicate: false,
    };
    const [weight, battery] = renderReadings([reading], {
      profiles: [profile("Vendor Scale")],
      rng: new Rng(1),
    });
    expect([weight!.value_1, weight!.value_2, weight!.filter_params]).toEqual([
      "172.40",
      "0.00",
      null,
    ]);
    expect(battery!.value_1).toBe("0.00");
    expect(weight!.id).toBe(1);
    expect(battery!.id).toBe(2);
  });

  it("gives cellular devices no sensor code and an IMEI with a valid check digit", () => {
    const readings = generate("Vendor Cellular BPM", "normal", { days: 3 });
    const records = renderReadings(readings, {
      profiles: [profile("Vendor Cellular BPM")],
      rng: new Rng(3),
    });
    const imeis = new Set(records.map((r) => r.hardware_uuid));
    expect(imeis.size).toBe(1);
    const imei = [...imeis][0]!;
    expect(imei).toMatch(/^\d{15}$/);
    expect(luhnCheckDigit(imei.slice(0, 14))).toBe(Number(imei[14]));
    expect(records.every((r) => r.sensor_code === null)).toBe(true);
  });

  it("ties every gateway device of a patient to one 12-hex gateway, each with its own uuid", () => {
    const names = ["Vendor Scale", "Vendor Glucometer", "Vendor Cellular Scale"];
    const ids = resolveIdentities(names.map(profile), new Rng(9));
    const [scale, glucometer, cellular] = names.map((n) => ids.devices.get(n)!);
    expect(scale!.hardware_uuid).toMatch(/^[0-9A-F]{12}$/);
    expect(glucometer!.hardware_uuid).toBe(scale!.hardware_uuid);
    expect(cellular!.hardware_uuid).toMatch(/^\d{15}$/);
    expect(
      new Set([scale!.hwi_device_id, glucometer!.hwi_device_id, cellular!.hwi_device_id]).size,
    ).toBe(3);
    expect(ids.patientId).toMatch(/^\d{7}$/);
    // Adding a device draws nothing from another's identity stream.
    expect(
      resolveIdentities([profile("Vendor Scale")], new Rng(9)).devices.get("Vendor Scale"),
    ).toEqual(scale);
  });

  it("computes Luhn check digits (the IMEI example 49015420323751-8)", () => {
    expect(luhnCheckDigit("49015420323751")).toBe(8);
    expect(luhnCheckDigit("35209900176148")).toBe(1);
    const imei = drawImei(new Rng("imei"));
    expect(luhnCheckDigit(imei.slice(0, 14))).toBe(Number(imei.at(-1)));
  });

  it("sets created a few seconds after the reading, later still for a re-sent one", () => {
    const readings = generate(BPM, "normal", { days: 30, duplicateRate: 0.2 });
    const records = renderReadings(readings, { profiles: [profile(BPM)], rng: new Rng(4) });
    expect(records.map((r) => r.id)).toEqual(records.map((_, i) => i + 1));
    let resent = 0;
    for (const [i, r] of records.entries()) {
      const lag = at(r.created) - at(r.timestamp);
      expect(r.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      const duplicate = readings.flatMap((x) => x.records.map(() => x.duplicate))[i];
      if (duplicate) {
        resent++;
        expect(lag).toBeGreaterThan(2 * 60_000);
      } else {
        expect(lag).toBeGreaterThanOrEqual(8_000);
        expect(lag).toBeLessThanOrEqual(45_000);
      }
    }
    expect(resent).toBeGreaterThan(0);
  });

  it("keeps every original's created when re-sent readings are left out", () => {
    const readings = generate(BPM, "normal", { days: 20, duplicateRate: 0.2 });
    const options = { profiles: [profile(BPM)], rng: new Rng(4) };
    const all = renderReadings(readings, options).filter(
      (_, i) => !readings.flatMap((x) => x.records.map(() => x.duplicate))[i],
    );
    const originals = renderReadings(
      readings.filter((r) => !r.duplicate),
      options,
    );
    expect(originals.map((r) => r.created)).toEqual(all.map((r) => r.created));
  });

  it("renders microseconds", () => {
    expect(isoWithMicros(at("2024-10-16T04:10:28.109Z"), 806)).toBe("2024-10-16T04:10:28.109806Z");
    expect(isoWithMicros(0, 5)).toBe("1970-01-01T00:00:00.000005Z");
  });
});
