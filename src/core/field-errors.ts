import type { z } from "zod";
import { MESSAGES } from "./drf-fields.ts";
import { RpmlabError } from "./errors.ts";

/**
 * DRF's validation error body (spec 7.1: "a 400 validation error keyed by field name"):
 * messages per field, nested for nested serializers, a list of error objects for a list of
 * objects (`{}` for its valid items). Every validation error of the lab, from a zod body schema
 * or from a service's own rules, is an E_API_VALIDATION RpmlabError carrying this body in
 * `details.fields`, which src/api/errors.ts sends as is.
 */
export interface FieldErrors {
  [field: string]: string[] | FieldErrors | FieldErrors[];
}

type Issue = z.core.$ZodIssue;
type Node = FieldErrors | FieldErrors[] | string[];
export type FieldPath = string | readonly (string | number)[];

/** Adds `message` under `path`, creating the nested objects (or lists, for numeric keys). */
function add(root: FieldErrors, path: readonly (string | number)[], message: string): void {
  let node: Node = root;
  for (let i = 0; i < path.length - 1; i++) {
    node = child(node, path[i]!, typeof path[i + 1] === "number");
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
  if (typeof current === "object" && current !== null && !isMessages(current)) {
    return current as Node;
  }
  const fresh: Node = asList ? [] : {};
  holder[key] = fresh;
  return fresh;
}

function isMessages(value: object): boolean {
  return Array.isArray(value) && value.length > 0 && value.every((m) => typeof m === "string");
}

/**
 * Zod issues as DRF's error body (`{"patient": {"external_id": ["This field is required."]}}`):
 * messages under their field path, prefixed by `prefix`; a nested value that is not an object
 * under its `non_field_errors`; a null body as `{"non_field_errors": ["No data provided"]}`.
 */
export function toFieldErrors(
  issues: readonly Issue[],
  prefix: readonly (string | number)[] = [],
  root: FieldErrors = {},
): FieldErrors {
  for (const issue of issues) {
    const path = [...prefix, ...issue.path.map((p) => (typeof p === "symbol" ? String(p) : p))];
    let message = issue.message;
    const isObjectType = issue.code === "invalid_type" && issue.expected === "object";
    const aboutPresence = message === MESSAGES.required || message === MESSAGES.null;
    if (isObjectType && path.length === 0 && aboutPresence) message = MESSAGES.noData;
    if (path.length === 0 || (isObjectType && !aboutPresence)) path.push("non_field_errors");
    add(root, path, message);
  }
  return root;
}

/**
 * Gathers a service's messages by field path; `throwIfAny` raises them all at once, as DRF
 * reports every field's problems in one 400.
 */
export class FieldErrorCollector {
  private readonly root: FieldErrors = {};
  private count = 0;

  add(path: FieldPath, message: string): void {
    const keys = typeof path === "string" ? [path] : path;
    add(this.root, keys.length === 0 ? ["non_field_errors"] : keys, message);
    this.count++;
  }

  /** The issues of a zod parse of the value at `path`. */
  addIssues(path: FieldPath, issues: readonly Issue[]): void {
    if (issues.length === 0) return;
    toFieldErrors(issues, typeof path === "string" ? [path] : path, this.root);
    this.count += issues.length;
  }

  has(path?: FieldPath): boolean {
    if (path === undefined) return this.count > 0;
    let node: unknown = this.root;
    for (const key of typeof path === "string" ? [path] : path) {
      if (node === null || typeof node !== "object") return false;
      node = (node as Record<string | number, unknown>)[key];
    }
    return node !== undefined;
  }

  /** The messages so far, in DRF's shape. */
  fields(): FieldErrors {
    return this.root;
  }

  throwIfAny(): void {
    if (this.count > 0) throw validationError(this.root);
  }
}

/** The E_API_VALIDATION error whose 400 body is `fields`. */
export function validationError(fields: FieldErrors): RpmlabError {
  const first = firstMessage(fields);
  return new RpmlabError(
    "E_API_VALIDATION",
    `invalid ${Object.keys(fields).join(", ")}${first === undefined ? "" : `: ${first}`}`,
    { fields },
  );
}

/** One field's error, e.g. `fieldError(["device", "name"], "…")`. */
export function fieldError(path: FieldPath, message: string): RpmlabError {
  const errors = new FieldErrorCollector();
  errors.add(path, message);
  return validationError(errors.fields());
}

function firstMessage(fields: FieldErrors | FieldErrors[]): string | undefined {
  for (const value of Object.values(fields)) {
    if (Array.isArray(value) && typeof value[0] === "string") return value[0];
    const found = firstMessage(value as FieldErrors | FieldErrors[]);
    if (found !== undefined) return found;
  }
  return undefined;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
