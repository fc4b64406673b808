import { z } from "zod";
import { parseBleSpec } from "../config/ble-spec.ts";
import { parseBrokerSpec } from "../config/broker-spec.ts";
import { fulfilmentOverridesJsonSchema } from "../config/fulfilment-config.ts";
import { parseStoreSpec } from "../config/store-spec.ts";
import { MAX_INTEGER_FIELD } from "../core/drf-fields.ts";
import { parseIso } from "../core/time.ts";
import { isTimeZone } from "../readings/local-calendar.ts";
import { timeOfDay } from "../readings/patient-schema.ts";
import { WEBHOOK_EVENTS } from "../store/types-ingest.ts";
import { RESERVED_HEADERS } from "../webhooks/attempt.ts";
import { eventSchema } from "./actions.ts";
import { expectationSchema } from "./expectations.ts";
import { checkinEvery, localId, positiveDuration } from "./fields.ts";

/**
 * Schema of a scenario file (scenarios/*.yaml): the shape of every field. Rules that relate
 * fields (references, kits against connectivity, times against the duration) live in
 * resolve.ts, which also turns the text into the parsed Scenario the runner reads.
 */

/** True when the spec string's own parser accepts it; its message is not needed here. */
function parses(parse: (spec: string) => unknown): (spec: string) => boolean {
  return (spec) => {
    try {
      parse(spec);
      return true;
    } catch {
      return false;
    }
  };
}

const clockSchema = z.strictObject({
  start: z
    .string()
    .regex(
      /^\s*\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d+)?)?Z\s*$/,
      { error: "an ISO 8601 UTC date-time ending in Z, e.g. 2026-01-05T00:00:00Z", abort: true },
    )
    .refine((t) => parseIso(t) !== undefined, "not a valid date-time")
    .meta({ description: "Virtual start time, ISO 8601 UTC, e.g. 2026-01-05T00:00:00Z" }),
  speed: z
    .union([z.enum(["max", "realtime"]), z.number().positive()], {
      error: "expected max, realtime, or a positive number (virtual ms per wall ms)",
    })
    .default("max")
    .meta({
      description:
        "max: as fast as possible; realtime: one virtual ms per wall ms; a number: that many virtual ms per wall ms",
    }),
});

const transportsSchema = z.strictObject({
  ble: z
    .string()
    // The pattern goes into the JSON Schema for editors; parseBleSpec has the last word.
    .regex(/^\s*(?:direct|emulated|hci:?\d{1,3}|tcp:\/\/\S+)\s*$/, {
      error: "expected direct, emulated, tcp://host:port or hci:N",
      abort: true,
    })
    .refine(
      (s) => s.trim() === "direct" || parses(parseBleSpec)(s),
      "expected direct, emulated, tcp://host:port or hci:N",
    )
    .default("direct")
    .meta({
      description: "direct (no BLE, for large fleets) | emulated | hci:N | tcp://host:port",
    }),
  broker: z
    .string()
    // The pattern goes into the JSON Schema for editors; parseBrokerSpec has the last word.
    .regex(/^\s*(?:embedded(?::\d{1,5})?|mqtts?:\/\/\S+)\s*$/, {
      error: "expected embedded, embedded:PORT, mqtt://host:port or mqtts://…",
      abort: true,
    })
    .refine(
      parses(parseBrokerSpec),
      "expected embedded, embedded:PORT, mqtt://host:port or mqtts://…",
    )
    .default("embedded")
    .meta({ description: "embedded | embedded:PORT | mqtt://host:port | mqtts://host:port" }),
  store: z
    .string()
    .regex(/^\s*(?:memory|sqlite:\S.*|postgres(?:ql)?:\/\/\S+)\s*$/, {
      error: "expected memory, sqlite:PATH or postgres://…",
      abort: true,
    })
    .refine(parses(parseStoreSpec), "expected memory, sqlite:PATH or postgres://…")
    .default("memory")
    .meta({ description: "memory | sqlite:PATH | postgres://user@host:port/db" }),
});

const webhookSchema = z
  .strictObject({
    id: localId.meta({
      description: "Unique within the scenario; events and expectations name it",
    }),
    events: z
      .array(z.enum(WEBHOOK_EVENTS))
      .min(1)
      .refine((e) => new Set(e).size === e.length, "an event is listed twice")
      // JSON Schema's own keyword, so editors flag a repeat too.
      .meta({ uniqueItems: true }),
    url: z
      .string()
      .regex(
        /^(?:lab$|https?:\/\/[^\s/])/,
        'expected "lab" (a receiver the runner hosts and can fault) or an http(s) URL',
      )
      .meta({
        description: '"lab": a receiver the runner hosts (webhook.* faults need it), or a URL',
      }),
    post_as_array: z.boolean().default(false),
    enabled_by_default: z.boolean().default(true),
    auth_header: z
      .string()
      .min(1)
      .refine(
        (name) => !RESERVED_HEADERS.has(name.toLowerCase()),
        "the lab sets this header itself on every POST (README: Webhook registry)",
      )
      .optional(),
    auth_key: z.string().min(1).optional(),
    sign: z.boolean().default(false).meta({ description: "Opt in to the HMAC signature header" }),
  })
  // resolve.ts refuses one without the other; the same rule in JSON Schema's words for editors.
  .meta({ dependentRequired: { auth_header: ["auth_key"], auth_key: ["auth_header"] } });

/**
 * An account's id is also its client domain in the lab (every URL's /clients/{id}/), so it keeps
 * to both rules: a local id (lower case, starting with a letter) and a client domain (no _, at
 * most 64 characters, ending with a letter or digit). Else the run failed once started.
 */
const accountId = z
  .string()
  .regex(
    /^[a-z](?:[a-z0-9-]{0,62}[a-z0-9])?$/,
    `an account id is the lab's client domain: lower-case letters, digits and -, starting with a letter, ending with a letter or digit, at most 64 characters`,
  );

const accountSchema = z.strictObject({
  id: accountId.meta({
    description:
      "Local name of the account, and its client domain in the lab; cohorts and API actions name it",
  }),
  name: z.string().min(1).optional().meta({ description: "Display name" }),
  strip_status_metrics: z
    .boolean()
    .default(false)
    .meta({ description: "Spec 6.3.3: leave battery and status metrics out of webhooks" }),
  asr: z
    .strictObject({
      auto_reorder: z
        .strictObject({
          strips_below: z.number().int().min(1).max(MAX_INTEGER_FIELD).optional(),
          days_below: z.number().int().min(1).max(MAX_INTEGER_FIELD).optional(),
          supply_name: z.string().min(1).optional().meta({
            description: "The strip supply ordered (default Glucometer Test Strips (50))",
          }),
        })
        .refine(
          (r) => r.strips_below !== undefined || r.days_below !== undefined,
          "set strips_below, days_below or both",
        )
        .optional()
        .meta({
          description: "Spec 1.4: order strips when a glucometer runs low",
          // The refine's rule in JSON Schema's words, so editors flag it too.
          anyOf: [{ required: ["strips_below"] }, { required: ["days_below"] }],
        }),
    })
    .optional()
    .meta({ description: "Enables the ASR module (spec 4.5) for the account" }),
  webhooks: z.array(webhookSchema).default([]),
});

const cohortSchema = z.strictObject({
  // A patient's external_id is the cohort's id and its number (htn-0001): within the HWI
  // API's 255 characters whatever the count.
  id: localId
    .max(64, "at most 64 characters: each patient's external_id is the cohort's id and a number")
    .meta({ description: "Patients are named id[0], id[1], …; at most 64 characters" }),
  account: localId.meta({ description: "Id of the account the patients belong to" }),
  count: z.number().int().positive(),
  model: z
    .string()
    .min(1)
    .meta({ description: "Patient model (profiles/patients), e.g. hypertensive" }),
  kit: z
    .array(z.string().min(1))
    .min(1)
    .meta({ description: "Device profile names (rpmlab profiles list), one device of each" }),
  connectivity: z
    .enum(["gateway", "cellular"])
    .meta({ description: "gateway: one gateway per patient, BLE kit; cellular: IMEI devices" }),
  onboarding: z.enum(["active", "ordered"]).default("active").meta({
    description: "active: devices activated at start; ordered: shipped, readings after delivery",
  }),
  adherence: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .meta({ description: "Share of scheduled readings actually taken (overrides the model)" }),
  schedule: z
    .array(timeOfDay)
    .min(1)
    .optional()
    .meta({ description: "Local times of day for every device of the kit (overrides the model)" }),
  time_zones: z
    .array(z.string().refine(isTimeZone, "not an IANA time zone, e.g. America/New_York"))
    .min(1)
    .default(["UTC"])
    .meta({ description: "IANA zones given to patients in turn" }),
  checkin_every: checkinEvery.optional().meta({
    description:
      "gateway cohorts: how often each gateway checks in (default 15m, from 1m to 1h); fewer check-ins make a long run faster",
  }),
});

/** A scenario's name, and so its file's base name: kebab-case. */
export const SCENARIO_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;

export const scenarioSchema = z
  .strictObject({
    scenario: z
      .string()
      .regex(SCENARIO_NAME, "kebab-case, e.g. broker-chaos")
      .meta({ description: "The scenario's name: the file's base name" }),
    description: z.string().min(1).optional(),
    seed: z
      .union([z.number().int(), z.string().min(1)], {
        error: (issue) =>
          issue.input === undefined
            ? "required"
            : Number.isInteger(issue.input)
              ? // Past 2^53-1 YAML has already rounded it: kept, it would seed as another number.
                "an integer from -9007199254740991 to 9007199254740991 or a non-empty string"
              : "an integer or a non-empty string",
      })
      .meta({ description: "Seed of every random choice; `rpmlab run --seed` overrides it" }),
    clock: clockSchema,
    duration: positiveDuration.meta({ description: "How long the scenario runs in virtual time" }),
    transports: transportsSchema.default({ ble: "direct", broker: "embedded", store: "memory" }),
    accounts: z.array(accountSchema).min(1),
    cohorts: z.array(cohortSchema).min(1),
    fulfilment: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({
        description:
          'The fulfilment simulator for this run, as a `rpmlab serve --fulfilment-config` file sets it (README "Fulfilment"): any of its keys, over the defaults',
        // Checked by the simulator's own schema when resolved; its keys and ranges here so
        // editors flag a misspelt key or a probability of 2 as the loader does.
        ...fulfilmentOverridesJsonSchema(),
      }),
    events: z.array(eventSchema).default([]),
    expect: z.array(expectationSchema).default([]),
  })
  .meta({
    title: "rpmlab scenario",
    description: "A scenario for `rpmlab run`: accounts, cohorts, timed events, expectations",
  });
export type RawScenario = z.output<typeof scenarioSchema>;
export type RawCohort = RawScenario["cohorts"][number];
export type RawAccount = RawScenario["accounts"][number];
