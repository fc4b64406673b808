import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hwi, type Lab, makeLab } from "./helpers.ts";

const FIELDS = [
  "external_id",
  "name",
  "address",
  "city",
  "state",
  "zip_code",
  "phone_number",
  "email",
  "physician",
  "clinic_name",
  "care_manager",
  "sms_opt_in",
  "confirm_address",
  "address_status",
  "address_verified_by",
];

/** Values of every JSON kind, with DRF's edge cases (boolean spellings, blanks, NUL, surrogates). */
const value = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary", maxLength: 300 }),
  fc.string({ minLength: 250, maxLength: 270 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(
    "true",
    "False",
    "yes",
    "off",
    "1",
    "0",
    "",
    "   ",
    "a\u0000b",
    "\ud800",
    "CA",
    "92614",
    "123 Main St",
  ),
  fc.jsonValue({ maxDepth: 2 }),
);

const text = fc.option(fc.string({ maxLength: 40 }), { nil: null });

/** Well-typed patients, with addresses good and bad: the write and verification paths. */
const wellTyped = fc.record(
  {
    external_id: fc.stringMatching(/^[A-Za-z0-9-]{1,20}$/),
    name: text,
    address: fc.constantFrom("123 Main St", "Main St", "1 Undeliverable Way", "", null),
    city: fc.constantFrom("Irvine", "", null),
    state: fc.constantFrom("CA", "ca", "XX", null),
    zip_code: fc.constantFrom("92614", "92614-1234", "9261", null),
    phone_number: text,
    email: text,
    sms_opt_in: fc.boolean(),
    confirm_address: fc.boolean(),
  },
  { requiredKeys: ["external_id"] },
);

/** Patient-shaped objects (known keys, read-only ones and junk) of any values; any JSON. */
const body = fc.oneof(
  { weight: 3, arbitrary: wellTyped },
  { weight: 3, arbitrary: fc.dictionary(fc.constantFrom(...FIELDS, "id", "__junk"), value) },
  { weight: 1, arbitrary: fc.jsonValue() },
);

/** Checks one answer; true when it was the success status. */
function checkAnswer(status: number, payload: unknown, success: number): boolean {
  if (status === success) {
    expect(Object.keys(payload as object)).toEqual(FIELDS);
    return true;
  }
  expect(status).toBe(400);
  expect(payload).toBeTypeOf("object");
  expect(Array.isArray(payload)).toBe(false);
  // The one general 400: JSON the parser refuses (a __proto__ key; test/api/transport.test.ts).
  const detail = (payload as { detail?: unknown }).detail;
  if (detail !== undefined) {
    expect(detail).toMatch(/^JSON parse error - a __proto__ or constructor.prototype key/);
    return false;
  }
  for (const [field, messages] of Object.entries(payload as object)) {
    expect([...FIELDS, "non_field_errors"]).toContain(field);
    expect(Array.isArray(messages) && messages.length > 0).toBe(true);
    for (const m of messages as unknown[]) expect(m).toBeTypeOf("string");
  }
  return false;
}

/**
 * Random JSON bodies to POST/PUT/PATCH hwi-patients never give a 500: always the success status
 * with the spec 2.1 record, or 400 keyed by field with DRF's list of messages.
 */
describe("hwi-patients under random bodies", () => {
  let lab: Lab;
  beforeAll(async () => {
    lab = await makeLab();
  });
  afterAll(() => lab.close());

  const cases = [
    { method: "POST", path: "hwi-patients/", success: 201 },
    { method: "PUT", path: "hwi-patients/fuzz-target/", success: 200 },
    { method: "PATCH", path: "hwi-patients/fuzz-target/", success: 200 },
  ] as const;

  for (const { method, path, success } of cases) {
    it(`${method} answers ${success} or 400 keyed by field`, async () => {
      let succeeded = 0;
      await fc.assert(
        fc.asyncProperty(body, async (sent) => {
          // PUT and PATCH may rename the target: make sure it exists for each run.
          await lab.store.patients.ensure(lab.dev.account.id, "fuzz-target");
          const res = await lab.app.inject({
            method,
            url: hwi(lab.dev, path),
            headers: {
              authorization: `Api-Key ${lab.dev.key}`,
              "content-type": "application/json",
            },
            payload: JSON.stringify(sent),
          });
          if (checkAnswer(res.statusCode, res.json(), success)) succeeded++;
        }),
        { numRuns: 1000 },
      );
      // The bodies must exercise the write path too, not only the validation errors.
      expect(succeeded).toBeGreaterThan(50);
    });
  }
});
