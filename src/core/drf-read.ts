import type { z } from "zod";
import { booleanField, charField, DEFAULT_MAX_LENGTH, MESSAGES } from "./drf-fields.ts";
import type { FieldErrorCollector } from "./field-errors.ts";

/**
 * Field-at-a-time reading for services whose rules depend on other fields or on the store
 * (device activation, replacements, properties): the same DRF fields as drf-fields.ts, run one
 * by one, their messages gathered in a FieldErrorCollector under the field's path.
 */

export interface ReadTextOptions {
  readonly required?: boolean;
  readonly allowNull?: boolean;
  readonly allowBlank?: boolean;
  readonly maxLength?: number;
}

const textFields = new Map<string, z.ZodType<string>>();

function textField(allowBlank: boolean, maxLength: number): z.ZodType<string> {
  const key = `${allowBlank}:${maxLength}`;
  let field = textFields.get(key);
  if (field === undefined) {
    field = charField({ allowBlank, maxLength }) as z.ZodType<string>;
    textFields.set(key, field);
  }
  return field;
}

const bool = booleanField();

/**
 * A DRF CharField. Returns undefined when absent, null for null (or blank, when both are
 * allowed), the trimmed text otherwise; on a problem it adds the message and returns undefined.
 */
export function readText(
  errors: FieldErrorCollector,
  path: readonly string[],
  value: unknown,
  opts: ReadTextOptions = {},
): string | null | undefined {
  if (value === undefined) {
    if (opts.required === true) errors.add(path, MESSAGES.required);
    return undefined;
  }
  if (value === null) {
    if (opts.allowNull === true) return null;
    errors.add(path, MESSAGES.null);
    return undefined;
  }
  const allowBlank = opts.allowBlank === true;
  const result = textField(allowBlank, opts.maxLength ?? DEFAULT_MAX_LENGTH).safeParse(value);
  if (!result.success) {
    errors.addIssues(path, result.error.issues);
    return undefined;
  }
  return result.data === "" && opts.allowNull === true ? null : result.data;
}

/** A DRF BooleanField; undefined when absent (the caller's default applies) or invalid. */
export function readBool(
  errors: FieldErrorCollector,
  path: readonly string[],
  value: unknown,
): boolean | undefined {
  if (value === undefined) return undefined;
  const result = bool.safeParse(value);
  if (result.success) return result.data;
  errors.addIssues(path, result.error.issues);
  return undefined;
}
