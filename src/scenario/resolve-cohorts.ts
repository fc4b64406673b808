import { parseDuration } from "../config/duration.ts";
import { findProfile, type ResolveContext, report } from "./resolve-context.ts";
import type { RawCohort } from "./schema.ts";
import type { Cohort } from "./types.ts";

type Path = ReadonlyArray<string | number>;

/**
 * A cohort's kit: profiles that exist, fit the cohort's connectivity, appear once, and (on a
 * gateway) do not share a sensor code, since a gateway takes one device per sensor code (spec
 * 2.8). Returns the current names, or undefined when something was reported.
 */
export function resolveKit(ctx: ResolveContext, raw: RawCohort, path: Path): string[] | undefined {
  const names: string[] = [];
  const sensorCodes = new Map<string, string>();
  let ok = true;
  raw.kit.forEach((name, i) => {
    const at = [...path, "kit", i];
    const profile = findProfile(ctx, name, at);
    if (profile === undefined) {
      ok = false;
      return;
    }
    if (profile.connectivity !== raw.connectivity) {
      ok = false;
      report(
        ctx,
        at,
        raw.connectivity === "gateway"
          ? `"${profile.name}" is a direct-cellular device; a gateway cohort's kit takes BLE devices`
          : `"${profile.name}" connects through a gateway; a cellular cohort's kit takes direct-cellular (IMEI) devices`,
      );
      return;
    }
    if (names.includes(profile.name)) {
      ok = false;
      report(ctx, at, `"${profile.name}" is already in the kit`);
      return;
    }
    const code = profile.sensor_code;
    const holder = code === null ? undefined : sensorCodes.get(code);
    if (code !== null && holder !== undefined) {
      ok = false;
      report(
        ctx,
        at,
        `"${profile.name}" and "${holder}" share sensor code ${code}; a gateway takes one device per sensor code`,
      );
      return;
    }
    if (code !== null) sensorCodes.set(code, profile.name);
    names.push(profile.name);
  });
  return ok ? names : undefined;
}

export function toCohort(raw: RawCohort, kit: string[]): Cohort {
  return {
    id: raw.id,
    account: raw.account,
    count: raw.count,
    model: raw.model,
    kit,
    connectivity: raw.connectivity,
    onboarding: raw.onboarding,
    adherence: raw.adherence,
    schedule: raw.schedule,
    timeZones: raw.time_zones,
    checkinEveryMs: raw.checkin_every === undefined ? undefined : parseDuration(raw.checkin_every),
  };
}
