import { z } from "zod";
import { clipped } from "../core/clip.ts";
import { RpmlabError } from "../core/errors.ts";
import { isPlainObject } from "../core/field-errors.ts";
import { type MsRange, parseDurationRange } from "./duration.ts";

/**
 * The fulfilment simulator's settings (issue 4 §2): how long each transition takes (a range,
 * drawn per shipment from its seeded Rng), how often stock runs short, a delivery fails or the
 * carrier holds a package, how many scans a package gets in transit. Defaults look like US
 * ground shipping: 1–2 business days to ship, 2–5 days in transit. README "Fulfilment" has the
 * table of transitions; every key below can be set in a file (`rpmlab serve
 * --fulfilment-config lab.yaml`) or one at a time (`--fulfilment durations.in_transit=1d..3d`).
 */

export const CARRIERS = ["ups", "fedex", "usps"] as const;
export type Carrier = (typeof CARRIERS)[number];

/** The defaults, as a configuration file spells them. */
export const FULFILMENT_DEFAULTS = {
  seed: "rpmlab",
  time_scale: 1,
  tracking_base_url: "https://tracking.rpmlab.test",
  durations: {
    restock: "2d..7d",
    processing: "1d..2d",
    first_scan: "4h..20h",
    in_transit: "2d..5d",
    out_for_delivery: "2h..9h",
    reattempt: "18h..30h",
    pickup: "1d..5d",
    duplicate_cleanup: "3d",
  },
  in_transit_scans: "2..5",
  probabilities: {
    stock_shortage: 0.05,
    delivery_issue: 0.04,
    delivery_issue_signature: 0.12,
    carrier_hold: 0.03,
  },
  max_delivery_attempts: 3,
  carriers: ["ups", "fedex", "usps"],
} as const;

export interface FulfilmentDurations {
  /** On Hold → Ready to Ship: stock arrives. */
  readonly restock: MsRange;
  /** Ready to Ship → Dropshipped, in business days (weekends are skipped). */
  readonly processing: MsRange;
  /** Dropshipped → In Transit: the carrier's first scan. */
  readonly firstScan: MsRange;
  /** First scan → Out for Delivery, spread over the in-transit scans. */
  readonly inTransit: MsRange;
  /** Out for Delivery → Delivered (or Delivery Issue). */
  readonly outForDelivery: MsRange;
  /** Delivery Issue → the next attempt (Out for Delivery), or Available for Pickup. */
  readonly reattempt: MsRange;
  /** Available for Pickup → the patient collects it (no webhook: spec 6.2). */
  readonly pickup: MsRange;
  /** A duplicate held in Client Action Required → Cancelled; null: never. */
  readonly duplicateCleanup: MsRange | null;
}

export interface FulfilmentConfig {
  /** Every shipment's Rng is forked from this seed and the shipment's id. */
  readonly seed: string;
  /** Divides every drawn duration: 1440 runs a day of shipping in a minute. */
  readonly timeScale: number;
  /** Tracking links are `<base>/<carrier>/<tracking number>`. */
  readonly trackingBaseUrl: string;
  readonly durations: FulfilmentDurations;
  /** Carrier scans while In Transit (each one fires In Transit), inclusive range. */
  readonly inTransitScans: { readonly min: number; readonly max: number };
  readonly probabilities: {
    /** Accepted request → On Hold instead of Ready to Ship. */
    readonly stockShortage: number;
    /** Out for Delivery → Delivery Issue instead of Delivered. */
    readonly deliveryIssue: number;
    /** The same, when a signature is required (nobody home to sign). */
    readonly deliveryIssueSignature: number;
    /** Last in-transit scan → Available for Pickup instead of Out for Delivery. */
    readonly carrierHold: number;
  };
  /** After this many failed attempts the carrier holds the package for pickup. */
  readonly maxDeliveryAttempts: number;
  readonly carriers: readonly Carrier[];
}

const RANGE_EXAMPLE = "e.g. 4h, 1.5d, 2d..5d (units ms, s, m, h, d)";

// zod's own type errors ("Invalid input: expected string, received number") say nothing a
// platform team writing `in_transit: 5` in YAML can act on: each schema says what it takes.
const range = z
  .string({
    error: (issue) =>
      `${shown(issue.input)} is not a duration or a range of them, ${RANGE_EXAMPLE}`,
  })
  .transform((text, ctx) => {
    const parsed = parseDurationRange(text);
    if (parsed === undefined) {
      ctx.addIssue({
        code: "custom",
        message: `"${text}" is not a duration or a range of them, ${RANGE_EXAMPLE}`,
      });
      return z.NEVER;
    }
    return parsed;
  });

const INT_RANGE_EXPECTED = "a whole number or range from 1 to 50, e.g. 3 or 2..5";

const intRange = z
  .union([z.number(), z.string()], {
    error: (issue) => `${shown(issue.input)} is not ${INT_RANGE_EXPECTED}`,
  })
  .transform((value, ctx) => {
    const m = /^(\d+)(?:\.\.(\d+))?$/.exec(String(value).trim());
    const min = Number(m?.[1]);
    const max = Number(m?.[2] ?? m?.[1]);
    if (m === null || min < 1 || max < min || max > 50) {
      ctx.addIssue({
        code: "custom",
        message: `"${value}" is not ${INT_RANGE_EXPECTED}`,
      });
      return z.NEVER;
    }
    return { min, max };
  });

/** A value as the error shows it: YAML's `5` and `"5"` read differently, so say which. */
function shown(value: unknown): string {
  return typeof value === "string" ? `"${value}"` : String(JSON.stringify(value) ?? value);
}

const probability = z
  .number({ error: "must be a number from 0 to 1" })
  .min(0, "must be a number from 0 to 1")
  .max(1, "must be a number from 0 to 1");

const SEED_EXPECTED = "an integer or a non-empty string";
const SEED_RANGE = "an integer from -9007199254740991 to 9007199254740991 or a non-empty string";

const ATTEMPTS_EXPECTED = "must be a whole number from 1 to 10";
const CARRIERS_EXPECTED = `must be a list of one or more of ${CARRIERS.join(", ")}, e.g. [ups, usps]`;

const FulfilmentFile = z.strictObject({
  // As a scenario's seed: (and --seed): a number YAML could not keep exactly (past 2^53-1, it
  // has rounded it already) would seed the shipments as another number, unsaid.
  seed: z
    .union(
      [
        z.string().min(1, SEED_EXPECTED),
        z.number().int({
          error: (issue) => (Number.isInteger(issue.input) ? SEED_RANGE : SEED_EXPECTED),
        }),
      ],
      { error: SEED_EXPECTED },
    )
    .transform(String),
  time_scale: z
    .number({ error: "must be a number greater than 0" })
    .positive("must be a number greater than 0"),
  tracking_base_url: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }),
  durations: z.strictObject({
    restock: range,
    processing: range,
    first_scan: range,
    in_transit: range,
    out_for_delivery: range,
    reattempt: range,
    pickup: range,
    duplicate_cleanup: z.union([z.literal("off"), range], {
      error: (issue) =>
        `${shown(issue.input)} is not off, a duration or a range of them, ${RANGE_EXAMPLE}`,
    }),
  }),
  in_transit_scans: intRange,
  probabilities: z.strictObject({
    stock_shortage: probability,
    delivery_issue: probability,
    delivery_issue_signature: probability,
    carrier_hold: probability,
  }),
  max_delivery_attempts: z
    .int({ error: ATTEMPTS_EXPECTED })
    .min(1, ATTEMPTS_EXPECTED)
    .max(10, ATTEMPTS_EXPECTED),
  carriers: z
    .array(z.enum(CARRIERS, { error: CARRIERS_EXPECTED }), { error: CARRIERS_EXPECTED })
    .min(1, CARRIERS_EXPECTED),
});

/** A bad setting: its key's path under `fulfilment`, and what is wrong. */
export interface FulfilmentProblem {
  readonly path: readonly string[];
  readonly message: string;
}

/**
 * The configuration from layers of overrides (a file's content, then single keys), each laid
 * over the defaults in turn. Every problem is reported at once, named by its key.
 */
export function fulfilmentConfig(...layers: readonly unknown[]): FulfilmentConfig {
  const checked = checkFulfilmentConfig(...layers);
  if ("config" in checked) return checked.config;
  const keyOf = (p: FulfilmentProblem) => p.path.join(".");
  throw new RpmlabError(
    "E_CONFIG_INVALID",
    checked.problems.map((p) => `${keyOf(p)}: ${p.message}`).join("; "),
    { field: keyOf(checked.problems[0]!) },
  );
}

/** As fulfilmentConfig, with the problems as a list (a scenario reports each at its path). */
export function checkFulfilmentConfig(
  ...layers: readonly unknown[]
): { readonly config: FulfilmentConfig } | { readonly problems: readonly FulfilmentProblem[] } {
  let merged: unknown = FULFILMENT_DEFAULTS;
  for (const layer of layers) merged = deepMerge(merged, layer);
  const result = FulfilmentFile.safeParse(merged);
  if (!result.success) {
    return {
      // An unknown key at its own path, as a scenario's other unknown keys are (scenario/load.ts).
      problems: distinct(
        result.error.issues.flatMap((i) =>
          i.code === "unrecognized_keys"
            ? i.keys.map((key) => ({
                path: ["fulfilment", ...i.path.map(String), key],
                message: "unknown key",
              }))
            : [
                {
                  path: ["fulfilment", ...i.path.map(String)],
                  message: withValue(i.message, valueAt(merged, i.path)),
                },
              ],
        ),
      ),
    };
  }
  return { config: toConfig(result.data) };
}

/**
 * The message with the value at fault, unless it starts with it already: "must be a number from
 * 0 to 1" alone left a file's reader to find which value of several was read as what.
 */
function withValue(message: string, value: unknown): string {
  const text = clipped(shown(value));
  return message.startsWith(text) || message.startsWith(`"${String(value)}"`)
    ? message
    : `${message}, got ${text}`;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let node = root;
  for (const key of path) {
    node =
      node !== null && typeof node === "object"
        ? (node as Record<PropertyKey, unknown>)[key]
        : undefined;
  }
  return node;
}

/** zod may report one key twice (a wrong type, then a check on it) with the same message. */
function distinct(problems: FulfilmentProblem[]): FulfilmentProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.path.join(".")}\n${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function toConfig(f: z.output<typeof FulfilmentFile>): FulfilmentConfig {
  return {
    seed: f.seed,
    timeScale: f.time_scale,
    trackingBaseUrl: f.tracking_base_url.replace(/\/+$/, ""),
    durations: {
      restock: f.durations.restock,
      processing: f.durations.processing,
      firstScan: f.durations.first_scan,
      inTransit: f.durations.in_transit,
      outForDelivery: f.durations.out_for_delivery,
      reattempt: f.durations.reattempt,
      pickup: f.durations.pickup,
      duplicateCleanup:
        f.durations.duplicate_cleanup === "off" ? null : f.durations.duplicate_cleanup,
    },
    inTransitScans: f.in_transit_scans,
    probabilities: {
      stockShortage: f.probabilities.stock_shortage,
      deliveryIssue: f.probabilities.delivery_issue,
      deliveryIssueSignature: f.probabilities.delivery_issue_signature,
      carrierHold: f.probabilities.carrier_hold,
    },
    maxDeliveryAttempts: f.max_delivery_attempts,
    carriers: f.carriers,
  };
}

export const DEFAULT_FULFILMENT_CONFIG: FulfilmentConfig = fulfilmentConfig();

/** `over` laid on `base`: objects merge key by key, anything else replaces. */
function deepMerge(base: unknown, over: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(over)) return over === undefined ? base : over;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) out[key] = deepMerge(base[key], value);
  return out;
}

/**
 * The keys a layer of overrides may set (a scenario's `fulfilment:`), as JSON Schema: the
 * file's keys, types and ranges, none of them required (the defaults fill in the rest).
 */
export function fulfilmentOverridesJsonSchema(): Record<string, unknown> {
  const { $schema: _, ...body } = z.toJSONSchema(FulfilmentFile, {
    target: "draft-2020-12",
    io: "input",
  }) as Record<string, unknown>;
  return withoutRequired(body) as Record<string, unknown>;
}

function withoutRequired(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutRequired);
  if (typeof node !== "object" || node === null) return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key]) => key !== "required")
      .map(([key, value]) => [key, withoutRequired(value)]),
  );
}
