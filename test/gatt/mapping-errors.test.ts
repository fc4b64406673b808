/**
 * What the mappings refuse, on the encode side (a reading that does not fit its profile) and for
 * profiles a mapping cannot carry; each refusal is an RpmlabError naming the field.
 */
import { describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { type Profile, profileSchema } from "../../src/catalogue/schema.ts";
import type { ErrorCode } from "../../src/core/errors.ts";
import { mappingFor } from "../../src/gatt/mapping.ts";
import { VENDOR } from "../../src/gatt/uuids.ts";
import {
  decodeVendorFeatures,
  encodeVendorFeatures,
  vendorFeaturesOf,
} from "../../src/gatt/vendor/features.ts";
import { decodeVendorRecord } from "../../src/gatt/vendor/record.ts";
import type { MetricRecord, PhysicalReading } from "../../src/readings/types.ts";
import { refusal } from "../support/refusal.ts";

const catalogue = Catalogue.load();
const T = Date.UTC(2024, 9, 16, 4, 10);

function expectRefusal(run: () => unknown, code: ErrorCode, field: string): void {
  const error = refusal(run);
  expect({ code: error.code, field: error.details.field }).toEqual({ code, field });
  expect(error.message).toContain(field);
}

/** A profile like `name` with some fields replaced, validated by the profile schema. */
function variant(name: string, change: (p: Record<string, unknown>) => void): Profile {
  const copy = structuredClone(catalogue.get(name)) as unknown as Record<string, unknown>;
  change(copy);
  return profileSchema.parse(copy);
}

describe("blood_pressure mapping refuses readings that do not fit the profile", () => {
  const profile = catalogue.get("Vendor BPM - Wide Range");
  const mapping = mappingFor(profile);
  const mi = { measurement_index: 587 };
  const bp: MetricRecord = {
    metric: "blood_pressure",
    value_1: 128,
    value_2: 84,
    filter_params: mi,
  };
  const pulse: MetricRecord = { metric: "pulse", value_1: 86, value_2: null, filter_params: mi };
  const reading = (
    records: MetricRecord[],
    extra: Partial<PhysicalReading> = {},
  ): PhysicalReading => ({
    timestamp: T,
    timezone_offset: -4,
    records,
    ...extra,
  });
  const encode = (r: PhysicalReading) => () => mapping.encode(r, profile);

  it("accepts the plain reading", () => {
    const r = reading([bp, pulse]);
    expect(mapping.decode(mapping.encode(r, profile), profile)).toStrictEqual(r);
  });

  it("checks values against the profile's range and step", () => {
    expectRefusal(
      encode(reading([{ ...bp, value_1: 120.5 }])),
      "E_CODEC_RANGE",
      "blood_pressure.value_1",
    );
    expectRefusal(
      encode(reading([{ ...bp, value_1: 300 }])),
      "E_CODEC_RANGE",
      "blood_pressure.value_1",
    );
    expectRefusal(
      encode(reading([{ ...bp, value_2: null }])),
      "E_CODEC_RANGE",
      "blood_pressure.value_2",
    );
    expectRefusal(
      encode(reading([bp, { ...pulse, value_2: 1 }])),
      "E_CODEC_RANGE",
      "pulse.value_2",
    );
    expectRefusal(
      encode(
        reading([
          bp,
          { metric: "irregular_heartbeat", value_1: 0, value_2: null, filter_params: mi },
        ]),
      ),
      "E_CODEC_RANGE",
      "irregular_heartbeat.value_1",
    );
  });

  it("checks the records: known metrics, once each, in the profile's order", () => {
    expectRefusal(encode(reading([pulse, bp])), "E_CODEC_MAPPING", "records");
    expectRefusal(encode(reading([bp, bp])), "E_CODEC_MAPPING", "records");
    expectRefusal(
      encode(reading([bp, { metric: "weight", value_1: 180, value_2: null, filter_params: null }])),
      "E_CODEC_MAPPING",
      "records",
    );
    expectRefusal(encode(reading([pulse])), "E_CODEC_MAPPING", "records");
  });

  it("checks filter params against the profile", () => {
    expectRefusal(
      encode(reading([bp, { ...pulse, filter_params: {} }])),
      "E_CODEC_MAPPING",
      "pulse.filter_params.measurement_index",
    );
    expectRefusal(
      encode(reading([bp, { ...pulse, filter_params: null }])),
      "E_CODEC_MAPPING",
      "pulse.filter_params",
    );
    expectRefusal(
      encode(reading([bp, { ...pulse, filter_params: { measurement_index: 588 } }])),
      "E_CODEC_MAPPING",
      "pulse.filter_params.measurement_index",
    );
    expectRefusal(
      encode(reading([{ ...bp, filter_params: { measurement_index: 0 } }])),
      "E_CODEC_RANGE",
      "blood_pressure.filter_params.measurement_index",
    );
    expectRefusal(
      encode(reading([{ ...bp, filter_params: { ...mi, alert: "x" } }])),
      "E_CODEC_MAPPING",
      "blood_pressure.filter_params",
    );
  });

  it("checks time: whole seconds, whole-hour offsets from -12 to +14", () => {
    expectRefusal(encode(reading([bp], { timestamp: T + 500 })), "E_CODEC_RANGE", "timestamp");
    expectRefusal(
      encode(reading([bp], { timezone_offset: 15 })),
      "E_CODEC_RANGE",
      "timezone_offset",
    );
    expectRefusal(
      encode(reading([bp], { timezone_offset: 5.5 })),
      "E_CODEC_RANGE",
      "timezone_offset",
    );
  });
});

describe("values one binary step off the decimal grid", () => {
  it("are taken as the grid value and come back as the canonical decimal", () => {
    const profile = catalogue.get("Vendor Peak Flow Meter");
    const mapping = mappingFor(profile);
    const fev = 0.1 + 0.2; // 0.30000000000000004
    const r: PhysicalReading = {
      timestamp: T,
      timezone_offset: 0,
      records: [
        {
          metric: "forced_expiratory_volume",
          value_1: fev,
          value_2: null,
          filter_params: { measurement_index: 1 },
        },
      ],
    };
    expect(mapping.decode(mapping.encode(r, profile), profile).records[0]!.value_1).toBe(0.3);
  });
});

describe("glucose mapping", () => {
  const profile = catalogue.get("Vendor Glucometer");
  const mapping = mappingFor(profile);
  const glucose = (filter_params: Record<string, string>): PhysicalReading => ({
    timestamp: T,
    timezone_offset: 0,
    records: [{ metric: "glucose", value_1: 120, value_2: null, filter_params }],
  });

  it("checks enum values and the record sequence number", () => {
    const fp = { meal_context: "pre-prandial", measurement_location: "finger" };
    expectRefusal(
      () => mapping.encode(glucose({ ...fp, meal_context: "lunch" }), profile),
      "E_CODEC_RANGE",
      "glucose.filter_params.meal_context",
    );
    expectRefusal(
      () => mapping.encode(glucose({ ...fp, alert: "low" }), profile),
      "E_CODEC_RANGE",
      "glucose.filter_params.alert",
    );
    expectRefusal(
      () => mapping.encode(glucose(fp), profile, 70_000),
      "E_CODEC_RANGE",
      "sequence_number",
    );
    const values = mapping.encode(glucose(fp), profile, 513);
    expect(Buffer.from(values[0]!.value.subarray(1, 3)).toString("hex")).toBe("0102");
  });

  it("refuses a profile whose enum values have no GATT code", () => {
    const odd = variant("Vendor Glucometer", (p) => {
      const params = p.filter_params as Array<Record<string, unknown>>;
      params[1] = { ...params[1], values: ["Finger", "earlobe"] };
    });
    expectRefusal(
      () =>
        mappingFor(odd).encode(
          glucose({ meal_context: "fasting", measurement_location: "Finger" }),
          odd,
        ),
      "E_CODEC_MAPPING",
      "filter_params.measurement_location",
    );
  });
});

describe("profiles a mapping cannot carry", () => {
  it("a metric the SIG characteristics have no field for", () => {
    const odd = variant("Vendor BPM - Wide Range", (p) => {
      (p.metrics as unknown[]).push({
        name: "weight",
        display_name: "Weight",
        vital: true,
        category: "vital",
        value_1: { meaning: "body weight", units: "pounds", min: 5, max: 400, step: 0.2 },
        value_2: null,
        emitted: "always",
        filter_params: [],
      });
    });
    const r: PhysicalReading = {
      timestamp: T,
      timezone_offset: 0,
      records: [
        {
          metric: "blood_pressure",
          value_1: 120,
          value_2: 80,
          filter_params: { measurement_index: 1 },
        },
      ],
    };
    expectRefusal(() => mappingFor(odd).encode(r, odd), "E_CODEC_MAPPING", "metrics");
  });

  it("a scale range beyond what Weight Measurement holds in pounds (655.34 lb)", () => {
    const heavy = variant("Vendor Bariatric Scale", (p) => {
      (p.metrics as Array<Record<string, unknown>>)[0]!.value_1 = {
        meaning: "body weight",
        units: "pounds",
        min: 10,
        max: 1000,
        step: 0.2,
      };
    });
    const r: PhysicalReading = {
      timestamp: T,
      timezone_offset: 0,
      records: [{ metric: "weight", value_1: 700, value_2: null, filter_params: null }],
    };
    expectRefusal(() => mappingFor(heavy).encode(r, heavy), "E_CODEC_RANGE", "weight");
  });

  it("a metric without a vendor record type", () => {
    const odd = variant("Vendor Medication Cap", (p) => {
      (p.metrics as Array<Record<string, unknown>>)[0]!.name = "capsensor_tilt_event";
    });
    const r: PhysicalReading = {
      timestamp: T,
      timezone_offset: 0,
      records: [{ metric: "capsensor_tilt_event", value_1: 1, value_2: null, filter_params: null }],
    };
    expectRefusal(() => mappingFor(odd).encode(r, odd), "E_CODEC_UNKNOWN", "metrics");
  });

  it("an unknown mapping name", () => {
    const odd = variant("Vendor Scale", (p) => {
      (p.gatt as Record<string, unknown>).mapping = "thermometer";
    });
    expectRefusal(() => mappingFor(odd), "E_CODEC_UNKNOWN", "gatt.mapping");
  });
});

describe("vendor record mappings", () => {
  it("check inhaler filter params: serial number pattern, flags of the metric", () => {
    const profile = catalogue.get("Vendor Inhaler Sensor");
    const mapping = mappingFor(profile);
    const record: MetricRecord = {
      metric: "inhaler_shake_detection_event",
      value_1: 1,
      value_2: 2.5,
      filter_params: {
        serial_number: "XY9876",
        device_log_index: 8,
        flags: { shake_intensity: 3 },
      },
    };
    const r = (rec: MetricRecord): PhysicalReading => ({
      timestamp: T,
      timezone_offset: 0,
      records: [rec],
    });
    expect(mapping.decode(mapping.encode(r(record), profile), profile)).toStrictEqual(r(record));
    const fp = record.filter_params!;
    expectRefusal(
      () =>
        mapping.encode(
          r({ ...record, filter_params: { ...fp, serial_number: "XY-876" } }),
          profile,
        ),
      "E_CODEC_RANGE",
      "inhaler_shake_detection_event.filter_params.serial_number",
    );
    expectRefusal(
      () =>
        mapping.encode(
          r({ ...record, filter_params: { ...fp, flags: { inhalation_valid: 1 } } }),
          profile,
        ),
      "E_CODEC_RANGE",
      "inhaler_shake_detection_event.filter_params.flags",
    );
    expectRefusal(
      () =>
        mapping.encode(
          r({ ...record, filter_params: { ...fp, flags: { shake_intensity: 0 } } }),
          profile,
        ),
      "E_CODEC_RANGE",
      "inhaler_shake_detection_event.filter_params.flags.shake_intensity",
    );
    expectRefusal(
      () => mapping.encode({ timestamp: T, timezone_offset: 0, records: [] }, profile),
      "E_CODEC_MAPPING",
      "records",
    );
  });

  it("check the beacon id against the profile's pattern and write it as a MAC", () => {
    const profile = catalogue.get("Vendor Proximity Band");
    const mapping = mappingFor(profile);
    const r = (beacon_id: string): PhysicalReading => ({
      timestamp: T,
      timezone_offset: 0,
      records: [
        { metric: "beacon_id_event", value_1: 0, value_2: null, filter_params: { beacon_id } },
      ],
    });
    const value = mapping.encode(r("0123456789AB"), profile)[0]!.value;
    expect(Buffer.from(value.subarray(-6)).toString("hex")).toBe("ab8967452301");
    expectRefusal(
      () => mapping.encode(r("0123456789ab"), profile),
      "E_CODEC_RANGE",
      "beacon_id_event.filter_params.beacon_id",
    );
  });

  it("number the records of a reading from the sequence given, wrapping at 65536", () => {
    const profile = catalogue.get("Vendor Peak Flow Meter");
    const mapping = mappingFor(profile);
    const mi = { measurement_index: 5 };
    const r: PhysicalReading = {
      timestamp: T,
      timezone_offset: 0,
      records: [
        { metric: "peak_expiratory_flow", value_1: 450, value_2: null, filter_params: mi },
        { metric: "forced_expiratory_volume", value_1: 3.25, value_2: null, filter_params: mi },
      ],
    };
    const values = mapping.encode(r, profile, 65535);
    expect(values.map((v) => decodeVendorRecord(v.value, profile).sequenceNumber)).toEqual([
      65535, 0,
    ]);
    expectRefusal(
      () => mapping.encode({ ...r, records: [{ ...r.records[0]!, filter_params: {} }] }, profile),
      "E_CODEC_MAPPING",
      "peak_expiratory_flow.filter_params.measurement_index",
    );
  });
});

describe("vendor features of the catalogue's vendor-record devices", () => {
  it("list each profile's metrics as record types and say whether records are stored", () => {
    for (const profile of catalogue.profiles) {
      if (!profile.gatt.characteristics.some((c) => c.uuid === VENDOR.features)) continue;
      const features = vendorFeaturesOf(profile);
      expect(decodeVendorFeatures(encodeVendorFeatures(features))).toEqual(features);
      expect([...features.recordTypes].sort()).toEqual(profile.metrics.map((m) => m.name).sort());
      expect(features.storedRecords).toBe(profile.stores_offline);
    }
  });
});
