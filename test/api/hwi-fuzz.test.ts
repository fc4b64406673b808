import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hwi, type Lab, makeLab } from "./helpers.ts";
import { BPM, catalogue, GW, GW2, IMEI, knownGateway, series } from "./hwi-fixtures.ts";

/** Values of every JSON kind, with the edge cases DRF fields meet. */
const value = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: "binary", maxLength: 300 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom("", "   ", "a\u0000b", "\ud800", "yes", "0", "Priority", "Gateway"),
  fc.jsonValue({ maxDepth: 2 }),
);

const names = fc.constantFrom(
  ...catalogue.profiles.map((p) => p.name),
  "Vendor BPM - L",
  "Vendor Nothing",
);
const hardware = fc.oneof(
  fc.constantFrom(GW, GW2, "29-70-56-12-0b-d7", IMEI, "", null, "xyz"),
  fc.stringMatching(/^[0-9A-Fa-f]{12}$/),
  fc.stringMatching(/^\d{15}$/),
  value,
);

/** Bodies that mostly pass: a new gateway id (or none) for any type, a well-formed patient. */
const wellTyped = fc.record(
  {
    device: fc.record({
      name: names,
      hardware_uuid: fc.option(fc.stringMatching(/^[0-9A-F]{12}$/), { nil: undefined }),
    }),
    patient: fc.record({ external_id: fc.stringMatching(/^P-\d{1,3}$/) }),
    sensor_id: fc.constantFrom(undefined, "AB12CD"),
    require_signature: fc.boolean(),
  },
  { requiredKeys: ["device"] },
);

/** Activation-shaped bodies (good and bad), objects of junk, and any JSON. */
const activation = fc.oneof(
  { weight: 4, arbitrary: wellTyped },
  {
    weight: 4,
    arbitrary: fc.record(
      {
        device: fc.oneof(
          fc.record({ name: names, hardware_uuid: hardware }, { requiredKeys: [] }),
          value,
        ),
        patient: fc.oneof(
          fc.record({ external_id: fc.oneof(fc.stringMatching(/^P-\d{1,3}$/), value) }),
          value,
        ),
        sensor_id: fc.oneof(fc.stringMatching(/^[A-Z0-9]{6,8}$/), value),
        require_signature: value,
        ship_gateway_only: fc.oneof(fc.boolean(), value),
        delivery_type: fc.oneof(fc.constantFrom("Priority", "Shipping"), value),
      },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 12 }), value) },
  { weight: 1, arbitrary: fc.jsonValue() },
);

const webhook = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record(
      {
        endpoint: fc.webUrl(),
        event: fc.constantFrom("MEASUREMENT", "FULFILLMENT", "SPECIAL_ORDER", "PATIENT"),
        post_as_array: fc.boolean(),
        enabled_by_default: fc.constantFrom(true, false, "yes", 0),
      },
      { requiredKeys: ["endpoint"] },
    ),
  },
  {
    weight: 4,
    arbitrary: fc.record(
      {
        endpoint: fc.oneof(fc.webUrl(), fc.constantFrom("ftp://x.example", "https://", ""), value),
        auth_header: fc.oneof(fc.constantFrom("Authorization", "X-Key", "Bad Header"), value),
        auth_key: fc.oneof(fc.string({ maxLength: 40 }), value),
        event: fc.oneof(
          fc.constantFrom("MEASUREMENT", "FULFILLMENT", "SPECIAL_ORDER", "PATIENT"),
          value,
        ),
        post_as_array: value,
        enabled_by_default: value,
      },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: fc.jsonValue() },
);

const PARAMS = [
  "metric__name",
  "timestamp__gte",
  "timestamp__lt",
  "created__gte",
  "created__lt",
  "page",
  "page_size",
  "hwi_device_id",
  "patient_id",
];
const queryValue = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom(
    "2024-10-15",
    "2024-10-15T04:10:00Z",
    "2024-10-15T04:10:00 01:00",
    "last",
    "0",
    "-1",
  ),
  fc.integer().map(String),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
);
const query = fc.array(fc.tuple(fc.constantFrom(...PARAMS, "junk"), queryValue), { maxLength: 6 });

/** Spec 7.2: whatever the body or query, the answer is never a 500. */
describe("HWI routes under random input", () => {
  let lab: Lab;
  let device: string;
  beforeAll(async () => {
    lab = await makeLab();
    await knownGateway(lab);
    const created = await lab.app.inject({
      method: "POST",
      url: hwi(lab.dev, "hwi-devices/"),
      headers: { authorization: `Api-Key ${lab.dev.key}`, "content-type": "application/json" },
      payload: JSON.stringify({
        device: { name: BPM, hardware_uuid: "AAAAAAAAAAAA" },
        patient: { external_id: "P-1" },
      }),
    });
    device = created.json().id;
    await lab.store.measurements.insertMany(series(lab.dev, device, 300, lab.clock.now()));
  });
  afterAll(() => lab.close());

  const post = (path: string, body: unknown) =>
    lab.app.inject({
      method: "POST",
      url: hwi(lab.dev, path),
      headers: { authorization: `Api-Key ${lab.dev.key}`, "content-type": "application/json" },
      payload: JSON.stringify(body),
    });

  /**
   * 400 bodies are keyed by field (lists of messages or nested objects); the only general 400 is
   * the parser's, for JSON it refuses (a __proto__ key).
   */
  const keyedByField = (payload: unknown) => {
    expect(payload).toBeTypeOf("object");
    expect(Array.isArray(payload)).toBe(false);
    expect(Object.keys(payload as object).length).toBeGreaterThan(0);
    const detail = (payload as { detail?: unknown }).detail;
    if (detail !== undefined) expect(detail).toMatch(/^JSON parse error - /);
  };

  it("POST hwi-devices/ answers 201 or 400 keyed by field", async () => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(activation, async (body) => {
        const res = await post("hwi-devices/", body);
        seen.set(res.statusCode, (seen.get(res.statusCode) ?? 0) + 1);
        expect([201, 400], res.body).toContain(res.statusCode);
        if (res.statusCode === 400) keyedByField(res.json());
        else expect(res.json()).toHaveProperty("hwi_device_id");
      }),
      { numRuns: 2000 },
    );
    expect(seen.get(201) ?? 0).toBeGreaterThan(50);
  }, 120_000);

  it("POST webhooks/ answers 201 or 400 keyed by field", async () => {
    let created = 0;
    await fc.assert(
      fc.asyncProperty(webhook, async (body) => {
        const res = await post("webhooks/", body);
        expect([201, 400], res.body).toContain(res.statusCode);
        if (res.statusCode === 400) keyedByField(res.json());
        else created++;
      }),
      { numRuns: 2000 },
    );
    expect(created).toBeGreaterThan(50);
  }, 120_000);

  it("measurement queries answer 200, 400 or 404 on every endpoint", async () => {
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          hwi(lab.dev, `hwi-devices/${device}/measurements/`),
          hwi(lab.dev, "patients/P-1/measurements/"),
          "/api/v2/hwi/device-measurements/",
          "/api/v2/hwi/patient-measurements/",
        ),
        query,
        async (path, params) => {
          const search = new URLSearchParams(params).toString();
          const res = await lab.app.inject({
            method: "GET",
            url: `${path}?${search}`,
            headers: { authorization: `Api-Key ${lab.dev.key}` },
          });
          statuses.add(res.statusCode);
          expect([200, 400, 404], res.body).toContain(res.statusCode);
        },
      ),
      { numRuns: 2000 },
    );
    expect([...statuses].sort()).toEqual([200, 400, 404]);
  }, 120_000);
});
