import { describe, expect, it } from "vitest";
import { epochFromUtc, toIsoMicros } from "../../src/core/time.ts";
import { hwi, send, T0 } from "./helpers.ts";
import { activate, BPM, DAY, GW, ok, reading } from "./hwi-fixtures.ts";
import { type Record, useMeasurementLab } from "./measurement-fixtures.ts";

/** The record keys of wire-formats "Measurement record", with id and metric_type (spec 2.5). */
const KEYS = [
  "id",
  "metric_type",
  "metric",
  "device_name",
  "hwi_device_id",
  "patient_id",
  "hardware_uuid",
  "sensor_code",
  "value_1",
  "value_2",
  "created",
  "timestamp",
  "timezone_offset",
  "estimated_timestamp",
  "filter_params",
];

const isoOf = toIsoMicros;

/** Spec 2.5, 4.4; wire-formats "Measurement queries": records, targets and filters. */
describe("measurements: records, targets, filters", () => {
  const m = useMeasurementLab();
  it("renders records as wire-formats shows them, with id and metric_type", async () => {
    await m.insert([
      m.at(T0 - DAY, { metric: "blood_pressure", value1: 128, value2: 82.5 }),
      m.at(T0 - DAY, { metric: "irregular_heartbeat", value1: 1, filterParams: null }),
    ]);
    const [bp, irregular] = ok<Record[]>(await m.get(m.endpoints("").device));
    expect(Object.keys(bp!)).toEqual(KEYS);
    expect(bp).toEqual({
      id: bp!.id,
      metric_type: "blood_pressure",
      metric: "blood_pressure",
      device_name: BPM,
      hwi_device_id: m.bpm,
      patient_id: "P-1",
      hardware_uuid: GW,
      sensor_code: "10",
      value_1: "128.00",
      value_2: "82.50",
      created: "2024-10-15T04:10:30.000000Z",
      timestamp: "2024-10-15T04:10:00.000000Z",
      timezone_offset: -4,
      estimated_timestamp: false,
      filter_params: { measurement_index: 1 },
    });
    expect(Number.isInteger(bp!.id)).toBe(true);
    expect(irregular).toMatchObject({ value_1: "1.00", value_2: "0.00", filter_params: null });
  });

  it("every endpoint answers the same records for the same query; flat without page", async () => {
    await m.insert([m.at(T0 - 2 * DAY), m.at(T0 - DAY, { metric: "blood_pressure", value2: 80 })]);
    const urls = m.endpoints("");
    const device = ok<Record[]>(await m.get(urls.device));
    expect(device).toHaveLength(2);
    for (const url of [urls.patient, urls.v2Device, urls.v2Patient]) {
      expect(ok<Record[]>(await m.get(url))).toEqual(device);
    }
  });

  it("hwi-patient-measurements/ (spec 4.4, 8 name it) answers under the HWI prefix as the v2 path does", async () => {
    await m.insert([m.at(T0 - 2 * DAY), m.at(T0 - DAY, { metric: "blood_pressure", value2: 80 })]);
    const query = "patient_id=P-1&page=1&page_size=1";
    const v2 = ok<{ results: Record[]; next: string }>(
      await m.get(`/api/v2/hwi/patient-measurements/?${query}`),
    );
    const hwi = ok<{ results: Record[]; next: string }>(
      await m.call("GET", `hwi-patient-measurements/?${query}`),
    );
    expect(hwi.results).toEqual(v2.results);
    expect(hwi.next).toMatch(/\/clients\/acme-dev\/hwi\/hwi-patient-measurements\/\?/);
    expect((await m.call("GET", "hwi-patient-measurements/")).json()).toEqual({
      patient_id: ["This field is required."],
    });
    expect((await m.call("GET", "hwi-patient-measurements/?patient_id=p-1")).statusCode).toBe(404);
    // Another account's key on this domain: 403, as every HWI path.
    const foreign = await send(
      m.lab.app,
      "GET",
      "/clients/acme-dev/hwi/hwi-patient-measurements/?patient_id=P-1",
      m.lab.other.key,
    );
    expect(foreign.statusCode).toBe(403);
  });

  it("patients/{id}/measurements/ spans every device of the patient, matched exactly (spec 4.4)", async () => {
    await m.insert([
      m.at(T0 - 2 * DAY),
      reading(m.lab.dev, m.scale, {
        metric: "weight",
        value1: 181.4,
        sensorCode: "34",
        source: "AA",
        timestamp: T0 - DAY,
        created: T0 - DAY + 1000,
      }),
      // Another patient's reading on the same device (before a re-assignment) is not P-1's.
      m.at(T0 - 3 * DAY, { patientExternalId: "P-2" }),
    ]);
    const all = ok<Record[]>(await m.call("GET", "patients/P-1/measurements/"));
    expect(all.map((r) => [r.metric, r.hwi_device_id])).toEqual([
      ["pulse", m.bpm],
      ["weight", m.scale],
    ]);
    for (const path of ["patients/p-1/measurements/", "patients/P-9/measurements/"]) {
      const res = await m.call("GET", path);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ detail: "No Patient matches the given query." });
    }
    const v2 = await m.get("/api/v2/hwi/patient-measurements/?patient_id=p-1");
    expect(v2.statusCode).toBe(404);
  });

  it("unknown or foreign devices are 404; v2 requires its parameter (400 keyed by it)", async () => {
    const foreign = await activate(m.lab, { device: { name: "Vendor Scale" } }, m.lab.other);
    for (const id of [foreign.id, "00000000-0000-4000-8000-000000000000", "x"]) {
      const res = await m.call("GET", `hwi-devices/${id}/measurements/`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ detail: "No Device matches the given query." });
      expect((await m.get(`/api/v2/hwi/device-measurements/?hwi_device_id=${id}`)).statusCode).toBe(
        404,
      );
    }
    expect((await m.get("/api/v2/hwi/device-measurements/")).json()).toEqual({
      hwi_device_id: ["This field is required."],
    });
    expect((await m.get("/api/v2/hwi/patient-measurements/?patient_id=")).json()).toEqual({
      patient_id: ["This field is required."],
    });
    expect(
      (await m.get(`/api/v2/hwi/device-measurements/?hwi_device_id=${m.bpm.toUpperCase()}`))
        .statusCode,
    ).toBe(200);
    // v2 paths take the key's own account.
    expect(
      (
        await send(
          m.lab.app,
          "GET",
          `/api/v2/hwi/device-measurements/?hwi_device_id=${m.bpm}`,
          m.lab.other.key,
        )
      ).statusCode,
    ).toBe(404);
  });

  it("an unknown device or patient is a 404 whatever the query, as on the patient path (DRF finds the object before it filters)", async () => {
    const unknown = "00000000-0000-4000-8000-000000000000";
    for (const query of ["timestamp__gte=yesterday", "page=abc", "created__lt=2024-13-01&page=0"]) {
      for (const url of [
        hwi(m.lab.dev, `hwi-devices/${unknown}/measurements/?${query}`),
        `/api/v2/hwi/device-measurements/?hwi_device_id=${unknown}&${query}`,
        hwi(m.lab.dev, `patients/nobody/measurements/?${query}`),
        `/api/v2/hwi/patient-measurements/?patient_id=nobody&${query}`,
      ]) {
        const res = await m.get(url);
        expect(res.statusCode, url).toBe(404);
      }
      // A known device still gets the 400 keyed by the parameter.
      expect((await m.get(m.endpoints(query).device)).statusCode).toBe(400);
    }
  });

  it("a device of the account without readings answers an empty list, not a 404", async () => {
    for (const url of [m.endpoints("").device, m.endpoints("").v2Device]) {
      expect(ok(await m.get(url))).toEqual([]);
    }
    expect(ok(await m.get(m.endpoints("page=1").device))).toEqual({
      count: 0,
      next: null,
      previous: null,
      results: [],
    });
    expect((await m.get(m.endpoints("page=2").device)).json()).toEqual({ detail: "Invalid page." });
    expect(ok(await m.call("GET", `hwi-devices/${m.scale}/measurements/?page=last`))).toMatchObject(
      {
        count: 0,
      },
    );
  });

  it("each filter: metric__name, timestamp__gte/__lt, created__gte/__lt (bounds inclusive/exclusive)", async () => {
    const t = T0 - 5 * DAY;
    await m.insert([
      m.at(t, { metric: "pulse", created: t + 10_000 }),
      m.at(t + 60_000, { metric: "blood_pressure", value2: 80, created: t + 70_000 }),
      m.at(t + 120_000, { metric: "pulse", measurementIndex: 2, created: t + 130_000 }),
    ]);
    const iso = (ms: number) => new URLSearchParams({ v: isoOf(ms) }).toString().slice(2);
    for (const url of Object.values(m.endpoints("metric__name=pulse"))) {
      expect(await m.timestamps(url)).toEqual(["2024-10-11T04:10", "2024-10-11T04:12"]);
    }
    for (const url of Object.values(m.endpoints(`timestamp__gte=${iso(t + 60_000)}`))) {
      expect(await m.timestamps(url)).toEqual(["2024-10-11T04:11", "2024-10-11T04:12"]);
    }
    for (const url of Object.values(m.endpoints(`timestamp__lt=${iso(t + 60_000)}`))) {
      expect(await m.timestamps(url)).toEqual(["2024-10-11T04:10"]);
    }
    for (const url of Object.values(m.endpoints(`created__gte=${iso(t + 70_000)}`))) {
      expect(await m.timestamps(url)).toEqual(["2024-10-11T04:11", "2024-10-11T04:12"]);
    }
    for (const url of Object.values(m.endpoints(`created__lt=${iso(t + 70_000)}`))) {
      expect(await m.timestamps(url)).toEqual(["2024-10-11T04:10"]);
    }
    const both = `metric__name=pulse&created__gte=${iso(t + 20_000)}&timestamp__lt=${iso(T0)}`;
    for (const url of Object.values(m.endpoints(both))) {
      expect(await m.timestamps(url)).toEqual(["2024-10-11T04:12"]);
    }
  });

  it("time filters read ISO 8601 forms: a date, an offset, an unescaped + (spec 8 rule 2)", async () => {
    await m.insert([
      m.at(epochFromUtc({ year: 2024, month: 10, day: 11, hours: 23, minutes: 30, seconds: 0 })),
    ]);
    const url = (q: string) => m.endpoints(q).device;
    expect(
      await m.timestamps(url("timestamp__gte=2024-10-11&timestamp__lt=2024-10-12")),
    ).toHaveLength(1);
    expect(await m.timestamps(url("timestamp__gte=2024-10-12T00:00:00%2B01:00"))).toHaveLength(1);
    expect(await m.timestamps(url("timestamp__gte=2024-10-12T00:00:00+01:00"))).toHaveLength(1);
    // Every offset form the escaped + takes (±hh, ±hhmm), unescaped as well.
    expect(await m.timestamps(url("timestamp__gte=2024-10-12T00:00:00+01"))).toHaveLength(1);
    expect(await m.timestamps(url("timestamp__gte=2024-10-12T00:00:00+0100"))).toHaveLength(1);
    expect(await m.timestamps(url("timestamp__gte=2024-10-12T00:00:00%2B01"))).toHaveLength(1);
    expect(
      await m.timestamps(
        url("timestamp__gte=2024-10-11T23:30:00.000000Z&timestamp__lt=2024-10-11T23:30:00.000001Z"),
      ),
    ).toHaveLength(1);
  });

  it("time filters take nanoseconds (Go RFC3339Nano, Java Instant) and a decimal comma, cut to microseconds as Django reads them", async () => {
    await m.insert([
      m.at(epochFromUtc({ year: 2024, month: 10, day: 11, hours: 23, minutes: 30, seconds: 0 })),
    ]);
    for (const url of Object.values(m.endpoints("timestamp__gte=2024-10-11T23:29:59.999999999Z"))) {
      expect(await m.timestamps(url)).toHaveLength(1);
    }
    const url = (q: string) => m.endpoints(q).device;
    // Beyond the sixth digit nothing counts: .000000999 is .000000, the reading's own time.
    expect(await m.timestamps(url("timestamp__gte=2024-10-11T23:30:00.000000999Z"))).toHaveLength(
      1,
    );
    expect(await m.timestamps(url("timestamp__gte=2024-10-11T23:30:00.000001Z"))).toHaveLength(0);
    expect(
      await m.timestamps(url("timestamp__gte=2024-10-11T23:30:00.123456789%2B00:00")),
    ).toHaveLength(0);
    expect(await m.timestamps(url("created__lt=2024-10-11T23:30:30.000000001+00:00"))).toHaveLength(
      0,
    );
    expect(await m.timestamps(url("timestamp__gte=2024-10-11T23:30:00,000Z"))).toHaveLength(1);
  });

  it("a time that is not ISO 8601 is a 400 keyed by its parameter, every one at once", async () => {
    for (const url of Object.values(
      m.endpoints("timestamp__gte=yesterday&created__lt=2024-13-01&timestamp__lt=2024-10-11T25:00"),
    )) {
      const res = await m.get(url);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        timestamp__gte: ["Enter a valid date/time."],
        timestamp__lt: ["Enter a valid date/time."],
        created__lt: ["Enter a valid date/time."],
      });
    }
    expect((await m.get(m.endpoints("created__gte=1728000000").device)).json()).toEqual({
      created__gte: ["Enter a valid date/time."],
    });
    expect((await m.get(m.endpoints("page=zero").device)).json()).toEqual({
      page: ["A valid integer is required."],
    });
  });
});
