import { describe, expect, it } from "vitest";
import { z } from "zod";
import { accountOf } from "../../src/api/auth.ts";
import { toJsonSchema } from "../../src/api/json-schema.ts";
import { PATIENT_JSON_SCHEMA, patientJson } from "../../src/api/schemas/patient.ts";
import type { RoutePlugin } from "../../src/api/types.ts";
import { hwi, makeLab, send } from "./helpers.ts";

/** Returns a record with a field the schema does not have. */
const leaky: RoutePlugin = async (app, ctx) => {
  app.get("/leaky/", { schema: { response: { 200: PATIENT_JSON_SCHEMA } } }, async (request) => {
    const p = await ctx.store.patients.ensure(accountOf(request).id, "P-1");
    return { ...patientJson(p.patient), internal_id: p.patient.id };
  });
};

/** Response schemas: zod in, JSON Schema fast-json-stringify serializes without branching. */
describe("toJsonSchema", () => {
  it("folds nullable fields to a type list, enums included", () => {
    const schema = toJsonSchema(
      z.object({
        a: z.string().nullable(),
        b: z.enum(["X", "Y"]).nullable(),
        c: z.union([z.object({ x: z.string() }), z.number()]),
        d: z.array(z.number().int().nullable()),
      }),
    );
    expect(schema.$schema).toBeUndefined();
    expect(schema.properties).toEqual({
      a: { type: ["string", "null"] },
      b: { type: ["string", "null"], enum: ["X", "Y", null] },
      c: {
        anyOf: [
          {
            type: "object",
            properties: { x: { type: "string" } },
            required: ["x"],
            additionalProperties: false,
          },
          { type: "number" },
        ],
      },
      d: {
        type: "array",
        items: {
          type: ["integer", "null"],
          minimum: Number.MIN_SAFE_INTEGER,
          maximum: Number.MAX_SAFE_INTEGER,
        },
      },
    });
  });

  it("the patient record has no anyOf left", () => {
    expect(JSON.stringify(PATIENT_JSON_SCHEMA)).not.toContain("anyOf");
    expect(PATIENT_JSON_SCHEMA.required).toHaveLength(15);
  });

  it("routes serialize with their compiled response schema, not JSON.stringify", async () => {
    const lab = await makeLab({ extraRoutes: { hwi: [leaky] } });
    try {
      const res = await send(lab.app, "GET", hwi(lab.dev, "leaky/"), lab.dev.key);
      expect(res.statusCode).toBe(200);
      // fast-json-stringify writes the schema's properties only.
      expect(res.json().external_id).toBe("P-1");
      expect(res.json()).not.toHaveProperty("internal_id");
    } finally {
      await lab.close();
    }
  });
});
