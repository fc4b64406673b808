import { z } from "zod";
import { DURATION_PATTERN, DURATION_TEXT, parseDuration } from "../config/duration.ts";
import { MAX_WEBHOOK_TIMEOUT_MS } from "../config/webhook-config.ts";
import { inCheckinRange } from "../gateway/checkin-period.ts";
import { AT_HELP, AT_PATTERN, parseAt } from "./at-time.ts";
import { COMPARATOR_HELP, COMPARATOR_PATTERN, parseComparator } from "./comparators.ts";
import { COHORT_ID, parseSelector, SELECTOR, SELECTOR_HELP } from "./selectors.ts";

/**
 * Field schemas shared by the parts of the scenario schema. Each checks the text with the same
 * parser the resolver later uses, so a value that passes here always parses there; the values
 * stay text, which keeps the published JSON Schema a plain description of the file.
 */

/** Local names: accounts, webhooks and cohorts are referred to by them. */
export const localId = z
  .string()
  .regex(COHORT_ID, "an id is lower-case letters, digits, - and _, starting with a letter");

const DURATION_HELP = "expected a duration such as 30d, 12h, 90m, 1.5d";

// The pattern also goes into the JSON Schema, so editors flag what the runner refuses.
export const duration = z
  .string()
  .regex(DURATION_PATTERN, { error: DURATION_HELP, abort: true })
  .refine((t) => parseDuration(t) !== undefined, DURATION_HELP)
  .meta({ description: "A duration: a number and a unit (ms, s, m, h, d), e.g. 6h, 90m, 1.5d" });

/** A duration that must be longer than zero (how long a fault lasts). */
export const positiveDuration = duration
  // Not a duration at all: `duration` said so already.
  .refine((t) => (parseDuration(t) ?? 1) > 0, "must be longer than 0")
  .meta({ description: "A duration longer than zero, e.g. 6h, 90m, 1.5d" });

/**
 * How long the lab's receiver waits before a slow answer (webhook.slow). Wall time, on a real
 * timer; past the longest webhook timeout a sender may have, every attempt times out anyway.
 */
export const slowDelay = duration
  .refine((t) => {
    // Not a duration at all: `duration` said so already.
    const ms = parseDuration(t);
    return ms === undefined || ms <= MAX_WEBHOOK_TIMEOUT_MS;
  }, "at most 10m: wall time, and past the longest webhook timeout (10m) every attempt times out")
  .meta({ description: "How long the receiver waits before it answers, at most 10m, e.g. 15s" });

/** How often a cohort's gateways check in (README "Cellular gateway"). */
export const checkinEvery = duration
  .refine((t) => {
    // Not a duration at all: `duration` said so already.
    const ms = parseDuration(t);
    return ms === undefined || inCheckinRange(ms);
  }, "from 1m to 1h: the service reports a gateway silent for over an hour with signal 0")
  .meta({ description: "How often each gateway checks in, from 1m to 1h, e.g. 15m" });

/** "+7m" or "-3m": how far a device clock is moved. */
export const SIGNED_DURATION = /^([+-])(.+)$/;
export const signedDuration = z
  .string()
  .regex(new RegExp(String.raw`^\s*[+-]\s*${DURATION_TEXT}\s*$`), {
    error: 'expected a signed duration such as "+7m" or "-3m"',
    abort: true,
  })
  .refine((t) => {
    const m = SIGNED_DURATION.exec(t.trim());
    return m !== null && (parseDuration(m[2]!) ?? 0) > 0;
  }, 'expected a signed duration such as "+7m" or "-3m"')
  .meta({ description: 'A signed duration: "+7m" (device clock ahead), "-3m" (behind)' });

export const atTime = z
  .string()
  .regex(AT_PATTERN, { error: AT_HELP, abort: true })
  .refine((t) => parseAt(t) !== undefined, AT_HELP)
  .meta({
    description:
      'When: "Nd HH:MM" (day N after clock.start\'s UTC day, UTC time), "HH:MM" (day 0), "Nd" (day N at 00:00), or an offset from clock.start such as "36h" or "90m"',
  });

export const selector = z
  .string()
  .regex(SELECTOR, { error: SELECTOR_HELP, abort: true })
  // Past the pattern, only a range that runs backwards is refused.
  .refine((t) => parseSelector(t) !== undefined, "the range runs backwards: write [a-b] with a ≤ b")
  .meta({
    description:
      'Patients of a cohort: "htn" or "htn[*]" (all), "htn[3]" (one), "htn[0-4]" (inclusive range)',
  });

export const comparator = z
  .union(
    [z.number(), z.string().regex(COMPARATOR_PATTERN, { error: COMPARATOR_HELP, abort: true })],
    {
      error: COMPARATOR_HELP,
    },
  )
  .refine((v) => parseComparator(v) !== undefined, COMPARATOR_HELP)
  .meta({ description: 'A number (==) or "<op> <number>", op one of == != >= <= > <' });

/**
 * API paths are relative to the account's `{base_url}/clients/{client_domain}`, written as they
 * go on the request line: visible ASCII (the HTTP client refuses a control character, and sends
 * other characters as bytes the lab cannot read as a URL), anything else percent-encoded.
 */
export const apiPath = z
  .string()
  .regex(
    /^\/(hwi|asr)\/[\x21-\x7e]*$/,
    'a path under the account\'s /clients/{client_domain}, starting /hwi/ or /asr/, e.g. "/hwi/hwi-patients/", in visible ASCII (percent-encode other characters: é is %C3%A9)',
  )
  .meta({
    description:
      'Path after {base_url}/clients/{client_domain}, starting /hwi/ or /asr/, e.g. "/hwi/hwi-patients/?page=1"',
  });
