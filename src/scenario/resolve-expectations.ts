import type { WebhookEvent } from "../store/types-ingest.ts";
import { formatComparator, parseComparator } from "./comparators.ts";
import { type RawExpectation, READING_COUNTERS } from "./expectations.ts";
import { type ResolveContext, report } from "./resolve-context.ts";
import type { Expectation, ExpectationCheck } from "./types.ts";

/**
 * The expectations, one per check. A readings item naming several counters becomes one check
 * per counter; with its own `text`, each gets the text followed by what it checks.
 */
export function resolveExpectations(
  ctx: ResolveContext,
  raws: readonly RawExpectation[],
): Expectation[] {
  return raws.flatMap((raw, i) => {
    const source = `expect[${i}]`;
    const checks = resolveChecks(ctx, raw, ["expect", i]);
    return checks.map((check) => ({
      ...check,
      source,
      text:
        raw.text === undefined
          ? describeCheck(check)
          : checks.length > 1
            ? `${raw.text}: ${describeCheck(check)}`
            : raw.text,
    }));
  });
}

function resolveChecks(
  ctx: ResolveContext,
  raw: RawExpectation,
  path: ReadonlyArray<string | number>,
): ExpectationCheck[] {
  const cmp = (value: number | string) => parseComparator(value)!;
  if (raw.readings !== undefined) {
    const readings = raw.readings;
    return READING_COUNTERS.flatMap((counter) => {
      const value = readings[counter];
      return value === undefined ? [] : [{ kind: "readings" as const, counter, cmp: cmp(value) }];
    });
  }
  if (raw.webhooks !== undefined) {
    const w = raw.webhooks;
    if (w.webhook === undefined && !receivedByAny(ctx, w.kind)) {
      // Only the scenario's webhooks are counted (run/webhook-counts.ts): such a check could
      // only count 0, so `count: 0` would pass whatever the run did.
      const receivers = [...ctx.webhooks.values()].map((h) => `${h.id}: ${h.events.join(", ")}`);
      report(
        ctx,
        [...path, "webhooks", "kind"],
        `no webhook of the scenario receives ${w.kind}, so there is nothing to count (${receivers.length === 0 ? "the scenario has no webhooks" : receivers.join("; ")})`,
      );
      return [];
    }
    if (w.webhook !== undefined) {
      const webhook = ctx.webhooks.get(w.webhook);
      if (webhook === undefined) {
        report(
          ctx,
          [...path, "webhooks", "webhook"],
          `no webhook "${w.webhook}" in any account's webhooks`,
        );
        return [];
      }
      if (!webhook.events.includes(w.kind)) {
        report(
          ctx,
          [...path, "webhooks", "kind"],
          `webhook "${w.webhook}" does not receive ${w.kind} (its events: ${webhook.events.join(", ")})`,
        );
        return [];
      }
    }
    return [
      { kind: "webhooks", event: w.kind, status: w.status, webhook: w.webhook, cmp: cmp(w.count) },
    ];
  }
  if (raw.fulfilment !== undefined) {
    return [{ kind: "fulfilment", status: raw.fulfilment.status, cmp: cmp(raw.fulfilment.count) }];
  }
  const api = raw.api!;
  if (!ctx.accounts.has(api.account)) {
    report(ctx, [...path, "api", "account"], `no account "${api.account}" in accounts`);
    return [];
  }
  return [
    {
      kind: "api",
      account: api.account,
      path: api.get,
      status: api.status,
      count: api.count === undefined ? undefined : cmp(api.count),
    },
  ];
}

function receivedByAny(ctx: ResolveContext, kind: WebhookEvent): boolean {
  return [...ctx.webhooks.values()].some((webhook) => webhook.events.includes(kind));
}

/** "readings.stored >= 100", "webhooks MEASUREMENT delivered (main) >= 100". */
export function describeCheck(check: ExpectationCheck): string {
  switch (check.kind) {
    case "readings":
      return `readings.${check.counter} ${formatComparator(check.cmp)}`;
    case "webhooks":
      return `webhooks ${check.event} ${check.status}${check.webhook === undefined ? "" : ` (${check.webhook})`} ${formatComparator(check.cmp)}`;
    case "fulfilment":
      return `fulfilment ${check.status} ${formatComparator(check.cmp)}`;
    case "api":
      return `api ${check.account} GET ${check.path} status ${check.status}${check.count === undefined ? "" : `, count ${formatComparator(check.count)}`}`;
  }
}
