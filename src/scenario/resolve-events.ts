import { formatDuration, parseDuration } from "../config/duration.ts";
import type { RawEvent } from "./actions.ts";
import { parseAt, resolveAt } from "./at-time.ts";
import { SIGNED_DURATION } from "./fields.ts";
import { findProfile, type ResolveContext, report } from "./resolve-context.ts";
import { parseSelector, resolveSelector, type Selector } from "./selectors.ts";
import type { Cohort, ScenarioAction, ScenarioEvent } from "./types.ts";

type Path = ReadonlyArray<string | number>;

/** Which cohorts an action's target may name. */
const TARGET_CONNECTIVITY: Partial<Record<RawEvent["action"], Cohort["connectivity"]>> = {
  "gateway.outage": "gateway",
  "gateway.replace": "gateway",
  "gateway.unlink": "gateway",
  "cellular.outage": "cellular",
  "radio.interference": "gateway",
  // A direct-cellular device sets its clock from the network: nothing to drift.
  "device.clock_drift": "gateway",
};

/** The events that pass every rule, sorted by time (stable: ties keep the file's order). */
export function resolveEvents(ctx: ResolveContext, raws: readonly RawEvent[]): ScenarioEvent[] {
  const events: ScenarioEvent[] = [];
  raws.forEach((raw, i) => {
    const event = resolveEvent(ctx, raw, ["events", i]);
    if (event !== undefined) events.push(event);
  });
  return events.sort((a, b) => a.atMs - b.atMs);
}

function resolveEvent(ctx: ResolveContext, raw: RawEvent, path: Path): ScenarioEvent | undefined {
  const before = ctx.issues.length;
  const atMs = resolveAt(parseAt(raw.at)!, ctx.startMs);
  if (atMs < 0) {
    report(ctx, [...path, "at"], `"${raw.at}" is before clock.start`);
  } else if (atMs >= ctx.durationMs) {
    report(
      ctx,
      [...path, "at"],
      `"${raw.at}" is ${atMs === ctx.durationMs ? "at" : "after"} the end of the run (duration ${formatDuration(ctx.durationMs)})`,
    );
  }
  const action = resolveAction(ctx, raw, path);
  if (action === undefined || ctx.issues.length > before) return undefined;
  return { ...action, atMs, at: raw.at, source: `events[${path[1]}]` };
}

function resolveAction(ctx: ResolveContext, raw: RawEvent, path: Path): ScenarioAction | undefined {
  const ms = (text: string) => parseDuration(text)!;
  switch (raw.action) {
    case "broker.restart":
    case "ingestion.restart":
      return { action: raw.action };
    case "broker.outage":
      return { action: raw.action, forMs: ms(raw.for) };
    case "gateway.outage":
    case "cellular.outage": {
      const target = resolveTarget(ctx, raw.action, raw.target, path);
      return target && { action: raw.action, target: target.selector, forMs: ms(raw.for) };
    }
    case "gateway.replace":
    case "gateway.unlink": {
      const target = resolveTarget(ctx, raw.action, raw.target, path);
      return target && { action: raw.action, target: target.selector };
    }
    case "device.out_of_range":
    case "device.battery_dead":
    case "device.clock_drift":
    case "device.duplicate_burst": {
      const target = resolveTarget(ctx, raw.action, raw.target, path);
      if (target === undefined) return undefined;
      const device =
        raw.device === undefined ? undefined : kitDevice(ctx, target.cohort, raw.device, path);
      if (raw.device !== undefined && device === undefined) return undefined;
      if (raw.action === "device.out_of_range") {
        return { action: raw.action, target: target.selector, device, forMs: ms(raw.for) };
      }
      if (raw.action === "device.battery_dead") {
        const forMs = raw.for === undefined ? undefined : ms(raw.for);
        return { action: raw.action, target: target.selector, device, forMs };
      }
      if (raw.action === "device.clock_drift") {
        const [, sign, size] = SIGNED_DURATION.exec(raw.drift.trim())!;
        const driftMs = (sign === "-" ? -1 : 1) * ms(size!);
        return { action: raw.action, target: target.selector, device, driftMs };
      }
      return { action: raw.action, target: target.selector, device, count: raw.count };
    }
    case "webhook.down":
    case "webhook.slow":
    case "webhook.error": {
      if (!faultableWebhook(ctx, raw.webhook, path)) return undefined;
      if (raw.action === "webhook.down") {
        return { action: raw.action, webhook: raw.webhook, forMs: ms(raw.for) };
      }
      if (raw.action === "webhook.slow") {
        const delayMs = ms(raw.delay);
        return { action: raw.action, webhook: raw.webhook, delayMs, forMs: ms(raw.for) };
      }
      return { action: raw.action, webhook: raw.webhook, status: raw.status, forMs: ms(raw.for) };
    }
    case "radio.interference": {
      const target =
        raw.target === undefined ? undefined : resolveTarget(ctx, raw.action, raw.target, path);
      if (raw.target !== undefined && target === undefined) return undefined;
      return {
        action: raw.action,
        target: target?.selector,
        loss: raw.loss,
        forMs: ms(raw.for),
      };
    }
    case "api.create_patient":
      return knownAccount(ctx, raw.account, path)
        ? { action: raw.action, account: raw.account, count: raw.count }
        : undefined;
    case "api.request":
      return knownAccount(ctx, raw.account, path)
        ? {
            action: raw.action,
            account: raw.account,
            method: raw.method,
            path: raw.path,
            body: raw.body,
            status: raw.status,
          }
        : undefined;
    case "api.activate_device":
    case "api.order_device": {
      const target = resolveTarget(ctx, raw.action, raw.target, path);
      const device = target && kitDevice(ctx, target.cohort, raw.device, path);
      return target && device !== undefined && anotherFits(ctx, target.cohort, device, path)
        ? { action: raw.action, target: target.selector, device }
        : undefined;
    }
    case "api.change_address": {
      const target = resolveTarget(ctx, raw.action, raw.target, path);
      return target && { action: raw.action, target: target.selector, address: raw.address };
    }
  }
}

/** The selector resolved against its cohort, which must exist and fit the action. */
function resolveTarget(
  ctx: ResolveContext,
  action: RawEvent["action"],
  text: string,
  path: Path,
): { selector: Selector; cohort: Cohort } | undefined {
  const at = [...path, "target"];
  const parsed = parseSelector(text)!;
  const cohort = ctx.cohorts.get(parsed.cohort);
  // A cohort with errors of its own still has its count and connectivity: the target is
  // checked against them, so every error of the file shows at once.
  const shape = cohort ?? ctx.brokenCohorts.get(parsed.cohort);
  if (shape === undefined) {
    report(ctx, at, `no cohort "${parsed.cohort}" in cohorts`);
    return undefined;
  }
  const selector = resolveSelector(parsed, shape.count);
  if (selector === undefined) {
    report(
      ctx,
      at,
      `"${text}" reaches past the last patient of ${parsed.cohort} (count ${shape.count}: ${parsed.cohort}[0-${shape.count - 1}])`,
    );
    return undefined;
  }
  const needs = TARGET_CONNECTIVITY[action];
  if (needs !== undefined && shape.connectivity !== needs) {
    report(
      ctx,
      at,
      `${action} applies to ${needs} cohorts; ${parsed.cohort} is ${shape.connectivity}`,
    );
    return undefined;
  }
  if (cohort === undefined) return undefined;
  return { selector, cohort };
}

/** The current name of a device of the cohort's kit, or undefined after reporting. */
function kitDevice(
  ctx: ResolveContext,
  cohort: Cohort,
  name: string,
  path: Path,
): string | undefined {
  const at = [...path, "device"];
  const profile = findProfile(ctx, name, at);
  if (profile === undefined) return undefined;
  if (!cohort.kit.includes(profile.name)) {
    report(
      ctx,
      at,
      `"${profile.name}" is not in the kit of ${cohort.id} (${cohort.kit.join(", ")})`,
    );
    return undefined;
  }
  return profile.name;
}

/**
 * A scenario patient has one gateway, and every kit type is on it already: another of the type
 * would need a gateway of its own (spec 2.8), unless sensor ids tell them apart.
 */
function anotherFits(ctx: ResolveContext, cohort: Cohort, device: string, path: Path): boolean {
  const profile = ctx.catalogue.get(device);
  if (cohort.connectivity !== "gateway" || profile.per_gateway === "many_by_sensor_id") return true;
  report(
    ctx,
    [...path, "device"],
    `each ${cohort.id} patient has a ${profile.name} on their one gateway already, and a gateway takes one device per sensor code (spec 2.8): a second needs a second gateway, which scenario patients do not have; a cellular cohort, or a type told apart by sensor_id, can take another`,
  );
  return false;
}

function knownAccount(ctx: ResolveContext, account: string, path: Path): boolean {
  if (ctx.accounts.has(account)) return true;
  report(ctx, [...path, "account"], `no account "${account}" in accounts`);
  return false;
}

/** Faults act on the receiver the runner hosts; an outside URL cannot be made to fail. */
function faultableWebhook(ctx: ResolveContext, id: string, path: Path): boolean {
  const webhook = ctx.webhooks.get(id);
  if (webhook === undefined) {
    report(ctx, [...path, "webhook"], `no webhook "${id}" in any account's webhooks`);
    return false;
  }
  if (webhook.url !== "lab") {
    report(
      ctx,
      [...path, "webhook"],
      `webhook "${id}" posts to ${webhook.url}; faults need url: lab (a receiver the runner hosts)`,
    );
    return false;
  }
  return true;
}
