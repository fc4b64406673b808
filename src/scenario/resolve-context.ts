import type { Catalogue } from "../catalogue/catalogue.ts";
import type { Profile } from "../catalogue/schema.ts";
import type { Cohort, ScenarioWebhook } from "./types.ts";

/** A problem found by a rule across fields, located by its path in the file. */
export interface RuleIssue {
  readonly path: ReadonlyArray<string | number>;
  readonly message: string;
}

/** What the event and expectation rules look things up in, and where they report. */
export interface ResolveContext {
  readonly catalogue: Catalogue;
  readonly startMs: number;
  readonly durationMs: number;
  readonly accounts: ReadonlySet<string>;
  /** Cohorts whose own fields passed; a reference to a broken one is not reported again. */
  readonly cohorts: ReadonlyMap<string, Cohort>;
  /** Cohorts with errors of their own: what the schema checked of them (events target them). */
  readonly brokenCohorts: ReadonlyMap<string, Pick<Cohort, "count" | "connectivity">>;
  readonly webhooks: ReadonlyMap<string, ScenarioWebhook>;
  readonly issues: RuleIssue[];
}

export function report(
  ctx: ResolveContext,
  path: ReadonlyArray<string | number>,
  message: string,
): void {
  ctx.issues.push({ path, message });
}

/** The profile for a current or legacy name, or undefined after reporting it. */
export function findProfile(
  ctx: ResolveContext,
  name: string,
  path: ReadonlyArray<string | number>,
): Profile | undefined {
  const profile = ctx.catalogue.find(name);
  if (profile === undefined) {
    report(ctx, path, `unknown device profile "${name}" (see rpmlab profiles list)`);
  }
  return profile;
}
