import { z } from "zod";

/**
 * The one DRF-style validator of the lab: zod builders for request bodies that accept, reject
 * and word their errors the way Django REST framework serializer fields do, since the real
 * service is a DRF application (spec 7.1: 400 keyed by field). The API declares bodies with them
 * (one declaration serves validation, typing and the OpenAPI document); the fulfilment services
 * read fields one at a time through drf-read.ts, which runs these same builders. What DRF does
 * and these mirror:
 * - CharField: numbers are accepted and stored as text; booleans, lists and objects are not;
 *   surrounding whitespace is trimmed; blank, null characters and lone surrogates are refused.
 * - BooleanField: true/false, "true"/"false" (any case listed by DRF), "yes"/"no", "on"/"off",
 *   "1"/"0", 1/0.
 * - ChoiceField, URLField: DRF's messages.
 * - Serializer (object): anything but an object is "Invalid data. Expected a dictionary, but
 *   got <python type>."; unknown keys and read-only fields are ignored.
 */

export const MESSAGES = {
  required: "This field is required.",
  null: "This field may not be null.",
  blank: "This field may not be blank.",
  string: "Not a valid string.",
  boolean: "Must be a valid boolean.",
  nullCharacter: "Null characters are not allowed.",
  noData: "No data provided",
  url: "Enter a valid URL.",
  dateTime: "Enter a valid date/time.",
  maxLength: (n: number) => `Ensure this field has no more than ${n} characters.`,
  surrogate: (code: number) =>
    `Surrogate characters are not allowed: U+${code.toString(16).toUpperCase()}.`,
  dictionary: (input: unknown) =>
    `Invalid data. Expected a dictionary, but got ${pythonType(input)}.`,
  list: (input: unknown) => `Expected a list of items but got type "${pythonType(input)}".`,
  choice: (value: string) => `"${value}" is not a valid choice.`,
  integer: "A valid integer is required.",
  minValue: (n: number) => `Ensure this value is greater than or equal to ${n}.`,
  maxValue: (n: number) => `Ensure this value is less than or equal to ${n}.`,
} as const;

/** Django's default CharField max_length for the service's text fields (spec: not shown). */
export const DEFAULT_MAX_LENGTH = 255;

/** The Python type name DRF puts in its messages for a parsed JSON value. */
export function pythonType(value: unknown): string {
  if (value === null) return "NoneType";
  if (Array.isArray(value)) return "list";
  switch (typeof value) {
    case "string":
      return "str";
    case "boolean":
      return "bool";
    case "number":
      return Number.isInteger(value) ? "int" : "float";
    default:
      return "dict";
  }
}

/**
 * The message of a request body that is not an object: a JSON null is DRF's "No data provided"
 * (Serializer.errors words a null root so), anything else names its type.
 */
export function notADictionaryBody(body: unknown): string {
  return body === null ? MESSAGES.noData : MESSAGES.dictionary(body);
}

/** The message of a wrong-type input: missing, null, or of the wrong kind. */
function typeMessage(wrongType: string | ((input: unknown) => string)) {
  return (issue: { input?: unknown }) => {
    if (issue.input === undefined) return MESSAGES.required;
    if (issue.input === null) return MESSAGES.null;
    return typeof wrongType === "string" ? wrongType : wrongType(issue.input);
  };
}

/** Matches a lone surrogate only: with the u flag a proper pair is one code point. */
const LONE_SURROGATE = /\p{Cs}/u;

function textChecks(text: string, ctx: z.RefinementCtx): void {
  if (text.includes("\u0000")) ctx.addIssue({ code: "custom", message: MESSAGES.nullCharacter });
  const surrogate = LONE_SURROGATE.exec(text);
  if (surrogate !== null) {
    ctx.addIssue({ code: "custom", message: MESSAGES.surrogate(surrogate[0].charCodeAt(0)) });
  }
}

export interface CharFieldOptions {
  readonly maxLength?: number;
  readonly allowBlank?: boolean;
  /**
   * A value the field takes, documented as its example in /docs/json: for a field whose values
   * are checked past the schema (a URL, a status name), so the explorer and generated clients
   * do not fill in a bare string the route answers 400. On the inner string, as the preprocess
   * wrapper's own metadata does not reach the document.
   */
  readonly example?: string;
}

/** DRF CharField (required unless wrapped in .optional(); null refused unless .nullable()). */
export function charField(opts: CharFieldOptions = {}) {
  const maxLength = opts.maxLength ?? DEFAULT_MAX_LENGTH;
  let text = z.string({ error: typeMessage(MESSAGES.string) }).trim();
  if (opts.allowBlank !== true) text = text.min(1, { error: MESSAGES.blank });
  const bounded = text.max(maxLength, { error: MESSAGES.maxLength(maxLength) });
  const documented =
    opts.example === undefined ? bounded : bounded.meta({ examples: [opts.example] });
  const checked = documented.superRefine(textChecks);
  return z.preprocess(
    (v) => (typeof v === "number" && Number.isFinite(v) ? String(v) : v),
    checked,
  );
}

/** A text field of the service's models: optional, and null or blank allowed. */
export function optionalText(description: string, example?: string) {
  return charField({ allowBlank: true, ...(example === undefined ? {} : { example }) })
    .nullable()
    .optional()
    .describe(description);
}

const TRUE_VALUES = new Set<unknown>([
  "t",
  "T",
  "y",
  "Y",
  "yes",
  "Yes",
  "YES",
  "true",
  "True",
  "TRUE",
  "on",
  "On",
  "ON",
  "1",
  1,
  true,
]);
const FALSE_VALUES = new Set<unknown>([
  "f",
  "F",
  "n",
  "N",
  "no",
  "No",
  "NO",
  "false",
  "False",
  "FALSE",
  "off",
  "Off",
  "OFF",
  "0",
  0,
  false,
]);

/** DRF BooleanField (required unless wrapped in .optional()). */
export function booleanField() {
  return z.preprocess(
    (v) => (TRUE_VALUES.has(v) ? true : FALSE_VALUES.has(v) ? false : v),
    z.boolean({ error: typeMessage(MESSAGES.boolean) }),
  );
}

/** What DRF's IntegerField reads as an integer: digits, a zero fraction at most (re_decimal). */
const WHOLE_NUMBER_TEXT = /^\s*[+-]?\d+(\.0*)?\s*$/;

/** The largest value of a Django IntegerField (a 32-bit column on every database). */
export const MAX_INTEGER_FIELD = 2_147_483_647;

/**
 * DRF IntegerField(min_value) of a model IntegerField (max_value 2^31 - 1): an integer, or a
 * string of one ("12", " 12 ", and "12.0": DRF strips a zero fraction before int()); floats with
 * no fraction pass as DRF's int() takes them (12.0), others do not.
 */
export function integerField(opts: { readonly min?: number } = {}) {
  let int = z
    .number({ error: typeMessage(MESSAGES.integer) })
    .int({ error: MESSAGES.integer })
    .max(MAX_INTEGER_FIELD, { error: MESSAGES.maxValue(MAX_INTEGER_FIELD) });
  if (opts.min !== undefined) int = int.min(opts.min, { error: MESSAGES.minValue(opts.min) });
  return z.preprocess(
    (v) => (typeof v === "string" && WHOLE_NUMBER_TEXT.test(v) ? Number.parseInt(v, 10) : v),
    int,
  );
}

/** DRF ChoiceField over fixed strings: `"x" is not a valid choice.` */
export function choiceField<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, {
    error: (issue) => {
      if (issue.input === undefined) return MESSAGES.required;
      if (issue.input === null) return MESSAGES.null;
      return MESSAGES.choice(inputText(issue.input));
    },
  });
}

/**
 * The rejected input as the error message quotes it. JSON for objects and arrays: String() would
 * throw on a body such as {"toString": false} and turn a 400 into a 500.
 */
function inputText(input: unknown): string {
  if (typeof input === "string") return input;
  if (typeof input !== "object" || input === null) return String(input);
  return JSON.stringify(input) ?? "";
}

/**
 * `scheme://` and then the host, as written: Django's URLValidator wants both, while the WHATWG
 * parser repairs `http:///host`, `http:/host` and backslashes into a URL other than the one
 * written, which the lab would then call.
 */
const SCHEME_AND_HOST = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]/i;

/**
 * DRF URLField restricted to the schemes given (default http and https): a CharField whose value
 * must be an absolute URL with a host, written as it parses (no backslash, nothing the WHATWG
 * parser would repair), "Enter a valid URL." otherwise.
 */
export function urlField(opts: CharFieldOptions & { schemes?: readonly string[] } = {}) {
  const schemes = opts.schemes ?? ["http", "https"];
  return charField({ ...opts, maxLength: opts.maxLength ?? 200 }).refine(
    (text) => {
      if (/[\s\\]/.test(text) || !SCHEME_AND_HOST.test(text) || !URL.canParse(text)) {
        return false;
      }
      const url = new URL(text);
      return schemes.includes(url.protocol.slice(0, -1)) && url.hostname !== "";
    },
    { error: MESSAGES.url },
  );
}

/** A DRF serializer: an object whose unknown keys are dropped. */
export function drfObject<S extends z.ZodRawShape>(shape: S) {
  return z.object(shape, { error: typeMessage(MESSAGES.dictionary) });
}
