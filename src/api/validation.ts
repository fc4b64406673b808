import type { FastifySchemaCompiler } from "fastify";
import type { z } from "zod";
import { toFieldErrors } from "../core/field-errors.ts";
import { apiError } from "./errors.ts";

/**
 * Fastify validator compiler for zod schemas: body, query and params problems become one
 * E_API_VALIDATION (400 keyed by field, DRF style: src/core/field-errors.ts). (A request without
 * a body arrives as `{}`, see content-types.ts.) Path parameters that do not validate mean the
 * URL names nothing: 404. A schema that is not zod is documentation only (json-schema.ts
 * `documentedBody`: a service validates that body itself) and passes the data through.
 */
export const validatorCompiler: FastifySchemaCompiler<z.ZodType> = ({ schema, httpPart }) => {
  if (typeof (schema as { safeParse?: unknown }).safeParse !== "function") {
    return (data: unknown) => ({ value: data });
  }
  return (data: unknown) => {
    const result = schema.safeParse(data);
    if (result.success) return { value: result.data };
    if (httpPart === "params") return { error: apiError.notFound() };
    return { error: apiError.validation(toFieldErrors(result.error.issues)) };
  };
};
