import { RpmlabError } from "../core/errors.ts";

/**
 * Validation errors of the device services, shaped like Django REST framework's 400 body (spec
 * 7.1: "a 400 validation error keyed by field name"): messages per field, nested for nested
 * objects, `{"device": {"name": ["…"]}, "sensor_id": ["…"]}`. They are E_API_VALIDATION errors
 * with the body in `details.fields`, which src/api/errors.ts sends as is, so a route can let them
 * through untouched.
 */
export interface FieldErrors {
  [field: string]: string[] | FieldErrors;
}

/** DRF's own texts for the generic cases, so messages read like the real service's. */
export const DRF_MESSAGES = {
  required: "This field is required.",
  null: "This field may not be null.",
  blank: "This field may not be blank.",
  string: "Not a valid string.",
  boolean: "Must be a valid boolean.",
  dictionary: (input: unknown) =>
    `Invalid data. Expected a dictionary, but got ${pythonType(input)}.`,
  list: (input: unknown) => `Expected a list of items but got type "${pythonType(input)}".`,
  choice: (value: string) => `"${value}" is not a valid choice.`,
  maxLength: (n: number) => `Ensure this field has no more than ${n} characters.`,
} as const;

/** The Python type name DRF puts in its messages for a JSON value. */
function pythonType(value: unknown): string {
  if (value === null) return "NoneType";
  if (Array.isArray(value)) return "list";
  if (typeof value === "string") return "str";
  if (typeof value === "boolean") return "bool";
  if (typeof value === "number") return Number.isInteger(value) ? "int" : "float";
  return "dict";
}

/** Collects messages by field path; `throwIfAny` raises them all at once, as DRF does. */
export class FieldErrorCollector {
  private readonly root: FieldErrors = {};
  private count = 0;

  add(path: string | readonly string[], message: string): void {
    const keys = typeof path === "string" ? [path] : path;
    let node = this.root;
    for (const key of keys.slice(0, -1)) {
      const next = node[key];
      if (next === undefined || Array.isArray(next)) {
        const fresh: FieldErrors = {};
        node[key] = fresh;
        node = fresh;
      } else {
        node = next;
      }
    }
    const last = keys[keys.length - 1] ?? "non_field_errors";
    const existing = node[last];
    if (Array.isArray(existing)) existing.push(message);
    else node[last] = [message];
    this.count++;
  }

  has(path?: string | readonly string[]): boolean {
    if (path === undefined) return this.count > 0;
    let node: string[] | FieldErrors | undefined = this.root;
    for (const key of typeof path === "string" ? [path] : path) {
      if (node === undefined || Array.isArray(node)) return false;
      node = node[key];
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

export function validationError(fields: FieldErrors): RpmlabError {
  const first = firstMessage(fields);
  return new RpmlabError(
    "E_API_VALIDATION",
    `invalid ${Object.keys(fields).join(", ")}${first === undefined ? "" : `: ${first}`}`,
    { fields },
  );
}

/** One field's error, e.g. `fieldError(["device", "name"], "…")`. */
export function fieldError(path: string | readonly string[], message: string): RpmlabError {
  const errors = new FieldErrorCollector();
  errors.add(path, message);
  return validationError(errors.fields());
}

function firstMessage(fields: FieldErrors): string | undefined {
  for (const value of Object.values(fields)) {
    const found = Array.isArray(value) ? value[0] : firstMessage(value);
    if (found !== undefined) return found;
  }
  return undefined;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Django's default CharField max_length (spec: not shown). */
const MAX_TEXT = 255;

/**
 * A DRF CharField: numbers become text, surrounding whitespace is trimmed (trim_whitespace),
 * other types are refused. Returns undefined for absent, null for null or blank when allowed;
 * otherwise adds the message and returns undefined.
 */
export function readText(
  errors: FieldErrorCollector,
  path: readonly string[],
  value: unknown,
  opts: { required?: boolean; allowNull?: boolean; allowBlank?: boolean; maxLength?: number } = {},
): string | null | undefined {
  if (value === undefined) {
    if (opts.required) errors.add(path, DRF_MESSAGES.required);
    return undefined;
  }
  if (value === null) {
    if (opts.allowNull) return null;
    errors.add(path, DRF_MESSAGES.null);
    return undefined;
  }
  const text =
    typeof value === "string"
      ? value.trim()
      : typeof value === "number" && Number.isFinite(value)
        ? String(value)
        : undefined;
  if (text === undefined) {
    errors.add(path, DRF_MESSAGES.string);
    return undefined;
  }
  if (text === "") {
    if (opts.allowBlank) return opts.allowNull ? null : "";
    errors.add(path, DRF_MESSAGES.blank);
    return undefined;
  }
  const max = opts.maxLength ?? MAX_TEXT;
  if (text.length > max) {
    errors.add(path, DRF_MESSAGES.maxLength(max));
    return undefined;
  }
  return text;
}

const TRUE = new Set<unknown>([true, 1, "1", "true", "True", "TRUE", "t", "T", "yes", "on"]);
const FALSE = new Set<unknown>([false, 0, "0", "false", "False", "FALSE", "f", "F", "no", "off"]);

/** A DRF BooleanField; undefined when absent (the caller's default applies) or invalid. */
export function readBool(
  errors: FieldErrorCollector,
  path: readonly string[],
  value: unknown,
): boolean | undefined {
  if (value === undefined) return undefined;
  if (TRUE.has(value)) return true;
  if (FALSE.has(value)) return false;
  errors.add(path, value === null ? DRF_MESSAGES.null : DRF_MESSAGES.boolean);
  return undefined;
}
