import { extname } from "node:path";
import { WebhookBody } from "../api/schemas/webhook.ts";
import { autoReorderSettings } from "../asr/auto-reorder-settings.ts";
import { SupplyCatalogue } from "../asr/supply-catalogue.ts";
import type { Catalogue } from "../catalogue/catalogue.ts";
import { parseDuration } from "../config/duration.ts";
import {
  checkFulfilmentConfig,
  DEFAULT_FULFILMENT_CONFIG,
  type FulfilmentConfig,
} from "../config/fulfilment-config.ts";
import { isRpmlabError } from "../core/errors.ts";
import { MS_PER_DAY, parseIso, toIsoMicros } from "../core/time.ts";
import { VENDOR_TIMESTAMP_MAX_MS } from "../gatt/vendor/record.ts";
import { MAX_DAYS } from "../readings/generate.ts";
import type { PatientModels } from "../readings/patients.ts";
import { DRAIN_LIMIT_MS } from "./drain.ts";
import { resolveKit, toCohort } from "./resolve-cohorts.ts";
import { type ResolveContext, type RuleIssue, report } from "./resolve-context.ts";
import { resolveEvents } from "./resolve-events.ts";
import { resolveExpectations } from "./resolve-expectations.ts";
import { type RawAccount, type RawScenario, SCENARIO_NAME } from "./schema.ts";
import type { Cohort, Scenario, ScenarioAccount, ScenarioWebhook } from "./types.ts";

/** The device catalogue and patient models a scenario's names are checked against. */
export interface ScenarioLibrary {
  readonly catalogue: Catalogue;
  readonly models: PatientModels;
}

export type ResolveResult =
  | { readonly ok: true; readonly scenario: Scenario }
  | { readonly ok: false; readonly issues: readonly RuleIssue[] };

/**
 * The rules across fields of a file that passed the schema, and the parsed Scenario: ids unique,
 * every reference names something that exists, kits fit their cohort, events fall within the
 * run and hit patients that exist. Every problem is collected, each with its path.
 */
export function resolveScenario(
  raw: RawScenario,
  file: string,
  baseName: string,
  library: ScenarioLibrary,
): ResolveResult {
  const issues: RuleIssue[] = [];
  if (raw.scenario !== baseName) {
    issues.push({
      path: ["scenario"],
      // A base name that no name can equal: the file is what to change.
      message: SCENARIO_NAME.test(baseName)
        ? `"${raw.scenario}" must equal the file's base name, "${baseName}"`
        : `"${raw.scenario}" must equal the file's base name, "${baseName}", which is not kebab-case: rename the file, e.g. ${raw.scenario}${extname(file)}`,
    });
  }
  const accounts = resolveAccounts(raw, issues);
  checkAutoReorder(raw, library.catalogue, issues);
  const accountIds = new Set(accounts.map((a) => a.id));
  // The first of a reused id counts; the reuse itself is reported by resolveAccounts.
  const webhooks = new Map<string, ScenarioWebhook>();
  for (const w of accounts.flatMap((a) => a.webhooks))
    if (!webhooks.has(w.id)) webhooks.set(w.id, w);
  const startMs = parseIso(raw.clock.start)!;
  const durationMs = parseDuration(raw.duration)!;
  checkSpan(startMs, durationMs, issues);
  if (durationMs > MAX_DAYS * MS_PER_DAY) {
    // Each device's readings are drawn for the run's days at once (fleet.ts, generateReadings).
    issues.push({
      path: ["duration"],
      message: `at most ${MAX_DAYS}d: a device's readings are generated for ${MAX_DAYS} days at most`,
    });
  }

  const cohorts = new Map<string, Cohort>();
  const brokenCohorts = new Map<string, Pick<Cohort, "count" | "connectivity">>();
  const ctx: ResolveContext = {
    catalogue: library.catalogue,
    startMs,
    durationMs,
    accounts: accountIds,
    cohorts,
    brokenCohorts,
    webhooks,
    issues,
  };
  raw.cohorts.forEach((c, i) => {
    const path = ["cohorts", i];
    const before = issues.length;
    if (cohorts.has(c.id) || brokenCohorts.has(c.id)) {
      report(ctx, [...path, "id"], `cohort id "${c.id}" is used twice`);
    }
    if (!accountIds.has(c.account)) {
      report(ctx, [...path, "account"], `no account "${c.account}" in accounts`);
    }
    if (library.models.find(c.model) === undefined) {
      report(
        ctx,
        [...path, "model"],
        `unknown patient model "${c.model}"; known: ${library.models.names.join(", ")}`,
      );
    }
    if (c.checkin_every !== undefined && c.connectivity !== "gateway") {
      report(
        ctx,
        [...path, "checkin_every"],
        "only a gateway cohort checks in; cellular devices connect when they have readings to send",
      );
    }
    const kit = resolveKit(ctx, c, path);
    if (kit === undefined || issues.length > before) {
      brokenCohorts.set(c.id, { count: c.count, connectivity: c.connectivity });
    } else cohorts.set(c.id, toCohort(c, kit));
  });

  const fulfilment = resolveFulfilment(raw, issues);
  const events = resolveEvents(ctx, raw.events);
  const expectations = resolveExpectations(ctx, raw.expect);
  if (issues.length > 0) return { ok: false, issues };
  return {
    ok: true,
    scenario: {
      file,
      name: raw.scenario,
      description: raw.description,
      seed: raw.seed,
      clock: { startMs, speed: raw.clock.speed },
      durationMs,
      transports: raw.transports,
      accounts,
      cohorts: [...cohorts.values()],
      fulfilment,
      events,
      expectations,
    },
  };
}

/**
 * An account's auto_reorder as the lab admin API checks it when the run sets it (a supply that
 * is a test strip supply still ordered): refused here at its key, not as an E_SCENARIO_FAILED
 * once the run has started.
 */
function checkAutoReorder(raw: RawScenario, catalogue: Catalogue, issues: RuleIssue[]): void {
  let supplies: SupplyCatalogue | undefined;
  raw.accounts.forEach((a, i) => {
    const thresholds = a.asr?.auto_reorder;
    if (thresholds === undefined) return;
    supplies ??= SupplyCatalogue.load(undefined, catalogue);
    try {
      autoReorderSettings(supplies, thresholds);
    } catch (error) {
      if (!isRpmlabError(error) || error.code !== "E_API_VALIDATION") throw error;
      const fields = error.details.fields as Record<string, string[]>;
      for (const [field, messages] of Object.entries(fields)) {
        for (const message of messages) {
          issues.push({ path: ["accounts", i, "asr", "auto_reorder", field], message });
        }
      }
    }
  });
}

/** Where the runner registers a `url: lab` webhook (its receiver's URL), for the check below. */
const LAB_URL_SAMPLE = "http://127.0.0.1:1/hooks/sample";

/**
 * What the lab's API would refuse when the runner registers the webhook (POST hwi/webhooks/):
 * an endpoint that is no URL (`http://x y/`, a port past 65535), a header name that is not a
 * token, a key with a line break, a field too long. Found here, not as an E_SCENARIO_FAILED
 * once the run has started; reported at the file's key with the API's message.
 */
function refusedByApi(
  w: RawAccount["webhooks"][number],
  path: ReadonlyArray<string | number>,
): RuleIssue[] {
  const checked = WebhookBody.safeParse({
    endpoint: w.url === "lab" ? LAB_URL_SAMPLE : w.url,
    auth_header: w.auth_header,
    auth_key: w.auth_key,
  });
  if (checked.success) return [];
  return checked.error.issues.map((issue) => {
    const field = issue.path[0] === "endpoint" ? "url" : String(issue.path[0] ?? "url");
    return { path: [...path, field], message: `the lab's API refuses it: ${issue.message}` };
  });
}

/**
 * Every device type stamps its records as a Vendor Record does, in uint32 seconds since 1970
 * (src/gatt/vendor/record.ts): a run, with the day it may drain past its end, must fall in what
 * that holds, or its first reading cannot be encoded and the run dies halfway.
 */
function checkSpan(startMs: number, durationMs: number, issues: RuleIssue[]): void {
  const why = "a device stamps its records in uint32 seconds since 1970";
  const lastEndMs = VENDOR_TIMESTAMP_MAX_MS - DRAIN_LIMIT_MS;
  if (startMs < 0) {
    issues.push({ path: ["clock", "start"], message: `before 1970-01-01T00:00:00Z: ${why}` });
  } else if (startMs + durationMs > lastEndMs) {
    // The start alone past it is the start's fault; else the duration takes the run past it.
    const path = startMs >= lastEndMs ? ["clock", "start"] : ["duration"];
    const last = isoSeconds(lastEndMs);
    const max = isoSeconds(VENDOR_TIMESTAMP_MAX_MS);
    issues.push({
      path,
      message: `the run must end by ${last}: ${why}, which end at ${max}, and a run may drain a day past its end`,
    });
  }
}

function isoSeconds(ms: number): string {
  return toIsoMicros(ms).replace(".000000Z", "Z");
}

/** The file's fulfilment settings over the defaults; a bad one is reported at its key. */
function resolveFulfilment(raw: RawScenario, issues: RuleIssue[]): FulfilmentConfig {
  const checked = checkFulfilmentConfig(raw.fulfilment ?? {});
  if ("config" in checked) return checked.config;
  issues.push(...checked.problems);
  return DEFAULT_FULFILMENT_CONFIG;
}

function resolveAccounts(raw: RawScenario, issues: RuleIssue[]): ScenarioAccount[] {
  const seenAccounts = new Set<string>();
  const seenWebhooks = new Set<string>();
  return raw.accounts.map((a, i) => {
    if (seenAccounts.has(a.id)) {
      issues.push({ path: ["accounts", i, "id"], message: `account id "${a.id}" is used twice` });
    }
    seenAccounts.add(a.id);
    const webhooks = a.webhooks.map((w, j): ScenarioWebhook => {
      const path = ["accounts", i, "webhooks", j];
      if (seenWebhooks.has(w.id)) {
        issues.push({ path: [...path, "id"], message: `webhook id "${w.id}" is used twice` });
      }
      seenWebhooks.add(w.id);
      if ((w.auth_header === undefined) !== (w.auth_key === undefined)) {
        const missing = w.auth_header === undefined ? "auth_header" : "auth_key";
        issues.push({
          path: [...path, missing],
          message: "auth_header and auth_key go together: give both or neither",
        });
      } else issues.push(...refusedByApi(w, path));
      return {
        id: w.id,
        account: a.id,
        events: w.events,
        url: w.url,
        postAsArray: w.post_as_array,
        enabledByDefault: w.enabled_by_default,
        auth:
          w.auth_header === undefined || w.auth_key === undefined
            ? undefined
            : { header: w.auth_header, key: w.auth_key },
        sign: w.sign,
      };
    });
    return {
      id: a.id,
      name: a.name,
      stripStatusMetrics: a.strip_status_metrics,
      asr: a.asr === undefined ? undefined : { autoReorder: a.asr.auto_reorder },
      webhooks,
    };
  });
}
