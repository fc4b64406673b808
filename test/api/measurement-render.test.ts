import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Envelope } from "../../src/api/pagination.ts";
import {
  MEASUREMENT_LISTS,
  type MeasurementJson,
  measurementJson,
} from "../../src/api/schemas/measurement.ts";
import { toIsoMicros } from "../../src/core/time.ts";
import { apiView } from "../../src/readings/api-view.ts";
import type { NewMeasurement } from "../../src/store/types-ingest.ts";
import { T0 } from "./helpers.ts";
import { catalogue, follow, ok } from "./hwi-fixtures.ts";
import { type MeasurementLab, useMeasurementLab } from "./measurement-fixtures.ts";

/** What the routes' response schemas write for a body (fast-json-stringify, as Fastify does). */
class SchemaSerializer {
  private readonly app: FastifyInstance = Fastify();
  private body: unknown;

  async start(): Promise<void> {
    const { flat, envelope } = MEASUREMENT_LISTS;
    this.app.get("/flat", { schema: { response: { 200: flat } } }, async () => this.body);
    this.app.get("/envelope", { schema: { response: { 200: envelope } } }, async () => this.body);
    await this.app.ready();
  }

  stop(): Promise<void> {
    return this.app.close();
  }

  async text(body: MeasurementJson[] | Envelope<MeasurementJson>): Promise<string> {
    this.body = body;
    const res = await this.app.inject({ url: Array.isArray(body) ? "/flat" : "/envelope" });
    expect(res.statusCode).toBe(200);
    return res.body;
  }
}

const MINUTE = 60_000;

/**
 * Two months of readings of every device type of the catalogue (spec 2.8), one record of each
 * metric the generator did not happen to send in that time, and text that needs escaping,
 * stored on the lab's cuff one minute apart (the device name and sensor code of each type).
 */
function catalogueReadings(m: MeasurementLab, start: number): NewMeasurement[] {
  const out: NewMeasurement[] = [];
  const add = (over: Partial<NewMeasurement>) => {
    const timestamp = start + out.length * MINUTE;
    out.push(m.at(timestamp, { measurementIndex: null, ...over }));
  };
  for (const profile of catalogue.profiles) {
    const patient = profile.family === "fetal_doppler" ? "pregnancy" : "heart-failure";
    const view = apiView({ device: profile.name, patient, seed: 1, days: 60, catalogue });
    const device = { deviceName: profile.name, sensorCode: profile.sensor_code };
    for (const r of view.records) {
      add({
        ...device,
        metric: r.metric,
        value1: Number(r.value_1),
        value2: r.value_2 === "0.00" ? null : Number(r.value_2),
        timezoneOffset: r.timezone_offset,
        filterParams: r.filter_params,
      });
    }
    for (const metric of profile.metrics) {
      if (view.records.some((r) => r.metric === metric.name)) continue;
      add({
        ...device,
        metric: metric.name,
        value1: 1,
        value2: metric.value_2 === null ? null : 0,
      });
    }
  }
  add({ deviceName: 'Cuff "A"\\ \u0000\u2028 ünï 😀', estimatedTimestamp: true, value2: 0 });
  add({ filterParams: { nested: { list: [1.5, "two", null, { k: "\ud800" }] }, "1": true } });
  return out;
}

/**
 * The measurement GETs read only the columns they render (store `records`): their answers are
 * byte for byte what rendering the full stored rows gave before.
 */
describe("measurement GETs render what the full rows rendered", () => {
  const m = useMeasurementLab();
  const serializer = new SchemaSerializer();
  beforeAll(() => serializer.start());
  afterAll(() => serializer.stop());

  it("for every metric of the catalogue, flat and page after page", async () => {
    const start = T0 - 10 * 86_400_000;
    const readings = catalogueReadings(m, start);
    // The rows as ingestion stored them, in the order of the GETs (timestamp, then id).
    const { inserted } = await m.insert(readings);
    expect(inserted).toHaveLength(readings.length);
    const before = inserted.map(measurementJson);
    // Every metric of the catalogue; filter_params null, {} and set; value_2 "0.00" and set.
    const metrics = new Set(before.map((r) => r.metric));
    for (const p of catalogue.profiles)
      for (const x of p.metrics) expect(metrics).toContain(x.name);
    expect(before.some((r) => r.filter_params === null)).toBe(true);
    expect(before.some((r) => r.filter_params !== null)).toBe(true);
    expect(before.some((r) => r.value_2 === "0.00")).toBe(true);
    expect(before.some((r) => r.value_2 !== "0.00")).toBe(true);

    const range = `timestamp__gte=${toIsoMicros(start)}&timestamp__lt=${toIsoMicros(T0)}`;
    const flat = await m.get(m.endpoints(range).device);
    expect(flat.statusCode).toBe(200);
    expect(flat.body).toBe(await serializer.text(before));

    let res = await m.get(m.endpoints("page=1&page_size=1000").device);
    for (let page = 0; ; page++) {
      const body = ok<Envelope<MeasurementJson>>(res);
      const results = before.slice(page * 1000, (page + 1) * 1000);
      expect(res.body).toBe(await serializer.text({ ...body, results }));
      if (body.next === null) break;
      res = await follow(m.lab, body.next);
    }
  });
});
