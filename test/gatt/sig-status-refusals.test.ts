/**
 * Values a real SIG peripheral sends whose numbers are not a patient's reading: the mapping
 * refuses them with an RpmlabError naming the field and the byte at fault, rather than turning
 * them into a reading with a wrong value or a wrong time.
 */
import { describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { valuesSayClockNotSet } from "../../src/gatt/clock-not-set.ts";
import { mappingFor } from "../../src/gatt/mapping.ts";
import { SIG } from "../../src/gatt/uuids.ts";
import { refusal } from "../support/refusal.ts";

const catalogue = Catalogue.load();

/** 2024-10-16 04:10:00 as a GSS Date Time. */
const DATE_TIME = [0xe8, 0x07, 10, 16, 4, 10, 0];
/** SFLOAT 97 (%) and 72 (bpm), exponent 0. */
const SPO2_PR = [97, 0x00, 72, 0x00];

describe("pulse_oximeter mapping, PLX Spot-check Measurement (2A5E) of a real oximeter", () => {
  const profile = catalogue.get("Vendor Pulse Ox");
  const mapping = mappingFor(profile);
  const decode = (bytes: number[]) =>
    mapping.decode(
      [{ uuid: SIG.characteristics.plxSpotCheckMeasurement, value: Uint8Array.from(bytes) }],
      profile,
    );

  it("decodes a timestamped spot-check with a clean Measurement Status", () => {
    const reading = decode([0x03, ...SPO2_PR, ...DATE_TIME, 0x80, 0x00]);
    expect(reading.timestamp).toBe(Date.UTC(2024, 9, 16, 4, 10));
    expect(reading.records.map((r) => [r.metric, r.value_1])).toEqual([
      ["spO2", 97],
      ["pulse", 72],
    ]);
  });

  it("decodes a spot-check whose device clock is not set (flags bit 4) with its stamp", () => {
    // Ingestion stores it at the receive time, estimated (test/ingest/processor.test.ts).
    const reading = decode([0x11, ...SPO2_PR, ...DATE_TIME]);
    expect(reading.timestamp).toBe(Date.UTC(2024, 9, 16, 4, 10));
  });

  // PLXS 1.0.1 Measurement Status: bits 10, 11, 13 and 15 say the values are no patient's.
  for (const [bit, what] of [
    [10, "data for demonstration"],
    [11, "data for testing"],
    [13, "measurement unavailable"],
    [15, "invalid measurement detected"],
  ] as const) {
    it(`refuses a value whose Measurement Status says ${what} (bit ${bit})`, () => {
      const status = 1 << bit;
      const error = refusal(() =>
        decode([0x03, ...SPO2_PR, ...DATE_TIME, status & 0xff, status >>> 8]),
      );
      expect(error.code).toBe("E_CODEC_RESERVED");
      expect(error.details).toMatchObject({ field: "measurement_status", offset: 12 });
      expect(error.message).toContain(what);
    });
  }
});

describe("a SIG time stamp with an unknown date part (GSS Date Time: 0 = not known)", () => {
  // Flags, then each mapping's Date Time at its place: 2A35 byte 7, 2A9D byte 3, 2A5E byte 5,
  // 2A18 byte 3 (after the sequence number).
  const cases = [
    {
      profile: "Vendor BPM - S",
      uuid: SIG.characteristics.bloodPressureMeasurement,
      field: "time_stamp",
      at: 7,
      bytes: (dt: number[]) => [0x02, 120, 0x00, 80, 0x00, 93, 0x00, ...dt],
    },
    {
      profile: "Vendor Scale",
      uuid: SIG.characteristics.weightMeasurement,
      field: "time_stamp",
      at: 3,
      bytes: (dt: number[]) => [0x03, 0x10, 0x27, ...dt],
    },
    {
      profile: "Vendor Pulse Ox",
      uuid: SIG.characteristics.plxSpotCheckMeasurement,
      field: "timestamp",
      at: 5,
      bytes: (dt: number[]) => [0x01, ...SPO2_PR, ...dt],
    },
    {
      profile: "Vendor Glucometer",
      uuid: SIG.characteristics.glucoseMeasurement,
      field: "base_time",
      at: 3,
      bytes: (dt: number[]) => [0x02, 0x01, 0x00, ...dt, 120, 0xb0, 0x11],
    },
  ];
  for (const c of cases) {
    for (const [part, index, partAt] of [
      ["year", 0, 0],
      ["month", 2, 2],
      ["day", 3, 3],
    ] as const) {
      it(`${c.profile}: ${c.field}.${part} 0 is refused naming byte ${c.at + partAt}`, () => {
        const profile = catalogue.get(c.profile);
        const dt = [...DATE_TIME];
        dt[index] = 0;
        if (part === "year") dt[1] = 0;
        const value = Uint8Array.from(c.bytes(dt));
        const error = refusal(() => mappingFor(profile).decode([{ uuid: c.uuid, value }], profile));
        expect(error.code).toBe("E_CODEC_RANGE");
        expect(error.details).toMatchObject({ field: `${c.field}.${part}`, offset: c.at + partAt });
        expect(error.message).toContain(`at byte ${c.at + partAt}`);
      });
    }
  }
});

describe("glucose mapping, Glucose Measurement (2A18) of a real meter", () => {
  const profile = catalogue.get("Vendor Glucometer");
  const mapping = mappingFor(profile);
  /** Flags (concentration, kg/L; + status), sequence 1, base time, 120 mg/dL, type-location. */
  const measurement = (typeLocation: number, status?: number) =>
    Uint8Array.from([
      status === undefined ? 0x02 : 0x0a,
      0x01,
      0x00,
      ...DATE_TIME,
      120,
      0xb0,
      typeLocation,
      ...(status === undefined ? [] : [status & 0xff, status >>> 8]),
    ]);
  const decode = (value: Uint8Array) =>
    mapping.decode([{ uuid: SIG.characteristics.glucoseMeasurement, value }], profile);

  it("a control solution test (Type 10) is measurement_location control solution", () => {
    // Type control solution (0x0A) at a location the meter does not know (0xF) or gives as finger.
    for (const typeLocation of [0xfa, 0x1a]) {
      const [glucose] = decode(measurement(typeLocation)).records;
      expect(glucose?.filter_params).toEqual({ measurement_location: "control solution" });
    }
    // A capillary sample from the finger stays a finger reading.
    const [finger] = decode(measurement(0x11)).records;
    expect(finger?.filter_params).toEqual({ measurement_location: "finger" });
  });

  it("keeps a reading whose Sensor Status Annunciation says only that the battery is low", () => {
    const [glucose] = decode(measurement(0x11, 0x0001)).records;
    expect(glucose?.value_1).toBe(120);
  });

  it("keeps a reading with a time fault (bit 11), whose time the values then disown", () => {
    const value = measurement(0x11, 0x0800);
    const [glucose] = decode(value).records;
    expect(glucose?.value_1).toBe(120);
    const uuid = SIG.characteristics.glucoseMeasurement;
    expect(valuesSayClockNotSet([{ uuid, value }])).toBe(true);
    expect(valuesSayClockNotSet([{ uuid, value: measurement(0x11, 0x0001) }])).toBe(false);
    expect(valuesSayClockNotSet([{ uuid, value: measurement(0x11) }])).toBe(false);
  });

  // GLS 1.0 Sensor Status Annunciation: bits whose result is no valid concentration, or whose
  // time is not the time of the reading.
  for (const [bit, what] of [
    [1, "sensor malfunction"],
    [2, "sample size insufficient"],
    [3, "strip insertion error"],
    [4, "strip type incorrect"],
    [7, "temperature too high"],
    [8, "temperature too low"],
    [9, "read interrupted"],
    [10, "general device fault"],
  ] as const) {
    it(`refuses a result annunciated with ${what} (bit ${bit}), naming byte 13`, () => {
      const error = refusal(() => decode(measurement(0x11, 1 << bit)));
      expect(error.code).toBe("E_CODEC_RESERVED");
      expect(error.details).toMatchObject({ field: "sensor_status_annunciation", offset: 13 });
      expect(error.message).toContain(what);
    });
  }
});

describe("weight_scale mapping, Weight Measurement (2A9D) of a real scale", () => {
  it("refuses Measurement Unsuccessful (weight 0xFFFF), naming the weight's byte", () => {
    const profile = catalogue.get("Vendor Scale");
    const value = Uint8Array.from([0x03, 0xff, 0xff, ...DATE_TIME]);
    const error = refusal(() =>
      mappingFor(profile).decode([{ uuid: SIG.characteristics.weightMeasurement, value }], profile),
    );
    expect(error.code).toBe("E_CODEC_RESERVED");
    expect(error.details).toMatchObject({ field: "weight", offset: 1 });
    expect(error.message).toContain("weight at byte 1");
  });
});

describe("User ID of a multi-user cuff or scale (BLS 1.1 flags bit 3, WSS 1.0 flags bit 2)", () => {
  const decoded = (profileName: string, uuid: string, bytes: number[]) => {
    const profile = catalogue.get(profileName);
    return () => mappingFor(profile).decode([{ uuid, value: Uint8Array.from(bytes) }], profile);
  };
  /** SFLOAT 128/84/99 mmHg, then the Date Time, then pulse 86 bpm. */
  const bp = (flags: number, ...tail: number[]) =>
    decoded("Vendor BPM - S", SIG.characteristics.bloodPressureMeasurement, [
      flags,
      ...[0x80, 0x00, 0x54, 0x00, 0x63, 0x00],
      ...DATE_TIME,
      ...[0x56, 0x00],
      ...tail,
    ]);
  /** 180.40 lb, then the Date Time. */
  const scale = (flags: number, ...tail: number[]) =>
    decoded("Vendor Scale", SIG.characteristics.weightMeasurement, [
      flags,
      0x78,
      0x46,
      ...DATE_TIME,
      ...tail,
    ]);

  it("takes a known user's reading as the device's patient's, the User ID not kept", () => {
    // Flags 0x1E: time stamp, pulse rate, User ID 2 at byte 16, then Measurement Status.
    expect(bp(0x1e, 0x02, 0x00, 0x00)()).toStrictEqual(bp(0x16, 0x00, 0x00)());
    expect(scale(0x07, 0x01)()).toStrictEqual(scale(0x03)());
  });

  it("refuses a reading for the unknown user (0xFF), naming the User ID's byte", () => {
    // The cuff did not know who took it (GSS User ID 0xFF): not the patient's reading to store.
    for (const [read, at] of [
      [bp(0x1e, 0xff, 0x00, 0x00), 16],
      [bp(0x0e, 0xff), 16],
      [scale(0x07, 0xff), 10],
    ] as const) {
      const error = refusal(read);
      expect(error.code).toBe("E_CODEC_RESERVED");
      expect(error.details).toMatchObject({ field: "user_id", offset: at });
      expect(error.message).toMatch(new RegExp(`user_id at byte ${at}: 0xFF, the unknown user`));
    }
  });
});
