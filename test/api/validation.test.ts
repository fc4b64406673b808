import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { RoutePlugin } from "../../src/api/types.ts";
import { booleanField, charField, drfObject, pythonType } from "../../src/core/drf-fields.ts";
import { toFieldErrors } from "../../src/core/field-errors.ts";
import { hwi, type Lab, makeLab, send } from "./helpers.ts";

/** A device-activation-like body: nested objects and a list, as later routes will have. */
const Nested = drfObject({
  device: drfObject({ name: charField(), hardware_uuid: charField().optional() }),
  patient: drfObject({ external_id: charField(), sms_opt_in: booleanField().optional() }),
  properties: z.array(drfObject({ key: charField(), value: charField() })).optional(),
});

const echo: RoutePlugin = async (app) => {
  app.post("/nested/", { schema: { body: Nested } }, async (request) => request.body);
};

/** Spec 7.1: 400 keyed by field, Django REST framework style (issue text). */
describe("400 keyed by field", () => {
  let lab: Lab;
  beforeEach(async () => {
    lab = await makeLab({ extraRoutes: { hwi: [echo] } });
  });
  afterEach(() => lab.close());

  const post = (path: string, body: unknown) =>
    send(lab.app, "POST", hwi(lab.dev, path), lab.dev.key, body);

  it("names each field with DRF's messages", async () => {
    const res = await post("hwi-patients/", {
      name: 12,
      city: ["x"],
      state: { a: 1 },
      email: true,
      sms_opt_in: "maybe",
      confirm_address: null,
      zip_code: "x".repeat(256),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      external_id: ["This field is required."],
      city: ["Not a valid string."],
      state: ["Not a valid string."],
      email: ["Not a valid string."],
      zip_code: ["Ensure this field has no more than 255 characters."],
      sms_opt_in: ["Must be a valid boolean."],
      confirm_address: ["This field may not be null."],
    });
  });

  it("refuses a blank or null external_id, null characters and lone surrogates", async () => {
    expect((await post("hwi-patients/", { external_id: "   " })).json()).toEqual({
      external_id: ["This field may not be blank."],
    });
    expect((await post("hwi-patients/", { external_id: null })).json()).toEqual({
      external_id: ["This field may not be null."],
    });
    expect((await post("hwi-patients/", { external_id: "a\u0000b" })).json()).toEqual({
      external_id: ["Null characters are not allowed."],
    });
    expect((await post("hwi-patients/", { external_id: "a\ud800b" })).json()).toEqual({
      external_id: ["Surrogate characters are not allowed: U+D800."],
    });
  });

  it("accepts what DRF accepts: numbers as text, DRF's boolean spellings, trimmed text", async () => {
    const res = await post("hwi-patients/", {
      external_id: 5383853,
      name: "  Patient One ",
      sms_opt_in: "false",
      confirm_address: 1,
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      external_id: "5383853",
      name: "Patient One",
      sms_opt_in: false,
      confirm_address: true,
    });
  });

  it("keeps every digit of a numeric id past 2^53: two patients stay two, found by their ids", async () => {
    // A platform whose ids are 64-bit integers (a Python or Java client) sends them as JSON
    // numbers; DRF's CharField reads the exact digits (str(int)). Read as a double they were
    // rounded: 12345678901234567890 and …891 both became "12345678901234567000".
    const raw = (body: string) =>
      lab.app.inject({
        method: "POST",
        url: hwi(lab.dev, "hwi-patients/"),
        headers: { authorization: `Api-Key ${lab.dev.key}`, "content-type": "application/json" },
        payload: body,
      });
    const first = await raw('{"external_id": 12345678901234567890, "name": -98765432109876543210}');
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json()).toMatchObject({
      external_id: "12345678901234567890",
      name: "-98765432109876543210",
    });
    const second = await raw('{"external_id":12345678901234567891}');
    expect(second.statusCode, second.body).toBe(201);
    expect(second.json().external_id).toBe("12345678901234567891");
    const found = await send(
      lab.app,
      "GET",
      hwi(lab.dev, "hwi-patients/12345678901234567890/"),
      lab.dev.key,
    );
    expect(found.statusCode).toBe(200);
    // Digits inside strings, and numbers a double holds exactly, are untouched.
    const third = await raw(
      '{"external_id": "x 99999999999999999999 y", "name": 9007199254740991}',
    );
    expect(third.json()).toMatchObject({
      external_id: "x 99999999999999999999 y",
      name: "9007199254740991",
    });
    expect((await raw("12345678901234567890")).json()).toEqual({
      non_field_errors: ["Invalid data. Expected a dictionary, but got int."],
    });
  });

  it("a body that is not an object is a non_field_errors, named by its Python type", async () => {
    const cases: [unknown, string][] = [
      [[1, 2], "list"],
      ["text", "str"],
      [7, "int"],
      [1.5, "float"],
      [true, "bool"],
    ];
    for (const [body, type] of cases) {
      const res = await post("hwi-patients/", body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        non_field_errors: [`Invalid data. Expected a dictionary, but got ${type}.`],
      });
    }
    const nullBody = await post("hwi-patients/", null);
    expect(nullBody.json()).toEqual({ non_field_errors: ["No data provided"] });
  });

  it("nests the errors of nested objects and lists", async () => {
    const res = await post("nested/", {
      device: { hardware_uuid: 5 },
      patient: {},
      properties: [{ key: "a", value: "b" }, { key: "" }],
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      device: { name: ["This field is required."] },
      patient: { external_id: ["This field is required."] },
      properties: [
        {},
        { key: ["This field may not be blank."], value: ["This field is required."] },
      ],
    });
  });

  it("a nested value of the wrong type is under its own non_field_errors", async () => {
    const res = await post("nested/", { device: "BPM", patient: null });
    expect(res.json()).toEqual({
      device: { non_field_errors: ["Invalid data. Expected a dictionary, but got str."] },
      patient: ["This field may not be null."],
    });
  });

  it("passes the parsed value to the handler", async () => {
    const body = { device: { name: " BPM " }, patient: { external_id: 9, sms_opt_in: "yes" } };
    const res = await post("nested/", body);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      device: { name: "BPM" },
      patient: { external_id: "9", sms_opt_in: true },
    });
  });
});

describe("toFieldErrors", () => {
  it("collects several messages of one field in order", () => {
    const schema = drfObject({ a: z.string().min(3, "short").regex(/^\d+$/, "digits") });
    const result = schema.safeParse({ a: "x" });
    expect(result.success).toBe(false);
    expect(toFieldErrors(result.error!.issues)).toEqual({ a: ["short", "digits"] });
  });

  it("pythonType names JSON values as DRF's messages do", () => {
    expect([null, [], "", true, 1, 1.5, {}].map(pythonType)).toEqual([
      "NoneType",
      "list",
      "str",
      "bool",
      "int",
      "float",
      "dict",
    ]);
  });
});
