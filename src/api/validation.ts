import type { FastifySchemaCompiler } from "fastify";
import type { z } from "zod";
import { MESSAGES } from "./drf-fields.ts";
import { apiError, type FieldErrors } from "./errors.ts";

type Issue = z.core.$ZodIssue;
type Node = FieldErrors | FieldErrors[] | string[];

/**
 * Zod issues as DRF's error body (issue text: `{"patient": {"external_id": ["This field is
 * required."]}}`): messages under their field path; a nested value that is not an object under
 * its `non_field_errors`; list items as a list with `{}` for the valid ones, as DRF's
 * ListSerializer does; a null body as `{"non_field_errors": ["No data provided"]}`.
 */
export function toFieldErrors(issues: readonly Issue[]): FieldErrors {
  const root: FieldErrors = {};
  for (const issue of issues) {
    const path = issue.path.map((p) => (typeof p === "symbol" ? String(p) : p));
    let message = issue.message;
    const isObjectType = issue.code === "invalid_type" && issue.expected === "object";
    const aboutPresence = message === MESSAGES.required || message === MESSAGES.null;
    if (isObjectType && path.length === 0 && aboutPresence) message = MESSAGES.noData;
    if (path.length === 0 || (isObjectType && !aboutPresence)) path.push("non_field_errors");
    add(root, path, message);
  }
  return root;
}

function add(root: FieldErrors, path: (string | number)[], message: string): void {
  let node: Node = root;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i]!;
    const nextIsIndex = typeof path[i + 1] === "number";
    node = child(node, key, nextIsIndex);
  }
  const last = path[path.length - 1]!;
  const holder = node as unknown as Record<string | number, unknown>;
  const existing = holder[last];
  if (Array.isArray(existing) && existing.every((m) => typeof m === "string")) {
    (existing as string[]).push(message);
  } else {
    holder[last] = [message];
  }
}

function child(node: Node, key: string | number, asList: boolean): Node {
  const holder = node as unknown as Record<string | number, unknown>;
  if (typeof key === "number" && Array.isArray(node)) {
    // DRF lists an error object per item, `{}` for items without errors.
    while (node.length <= key) (node as FieldErrors[]).push({});
  }
  const current = holder[key];
  if (current !== undefined && typeof current === "object") return current as Node;
  const fresh: Node = asList ? [] : {};
  holder[key] = fresh;
  return fresh;
}

/**
 * Fastify validator compiler for zod schemas: body, query and params problems become one
 * E_API_VALIDATION (400 keyed by field). (A request without a body arrives as `{}`, see
 * content-types.ts.) Path parameters that do not validate mean the URL names nothing: 404.
 */
export const validatorCompiler: FastifySchemaCompiler<z.ZodType> = ({ schema, httpPart }) => {
  // Plugins' own routes (the docs) may carry JSON Schema; the API's routes all use zod.
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
