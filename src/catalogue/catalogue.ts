import { fileURLToPath } from "node:url";
import { RpmlabError } from "../core/errors.ts";
import type { MetricSpec, Profile } from "./schema.ts";
import { loadProfilesOrThrow } from "./validate.ts";

/** The shipped device profiles, beside src/ in the package. */
export const DEFAULT_PROFILES_DIR = fileURLToPath(
  new URL("../../profiles/devices", import.meta.url),
);

/**
 * The device catalogue: every profile by name (legacy names resolve to the current name, spec
 * 2.4), by sensor code, and every metric by name.
 */
export class Catalogue {
  private readonly byName = new Map<string, Profile>();
  private readonly byLegacyName = new Map<string, Profile>();

  constructor(readonly profiles: readonly Profile[]) {
    for (const profile of profiles) {
      for (const name of [profile.name, ...profile.legacy_names]) {
        if (this.byName.has(name) || this.byLegacyName.has(name)) {
          throw new RpmlabError("E_PROFILE_INVALID", `device name "${name}" is used twice`, {
            field: "name",
          });
        }
      }
      this.byName.set(profile.name, profile);
      for (const legacy of profile.legacy_names) this.byLegacyName.set(legacy, profile);
    }
  }

  static load(dir: string = DEFAULT_PROFILES_DIR): Catalogue {
    // By name (code-point order, the same on every machine), not by file name.
    const profiles = loadProfilesOrThrow(dir).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
    return new Catalogue(profiles);
  }

  /** The profile for a current or legacy device name, or undefined. */
  find(name: string): Profile | undefined {
    return this.byName.get(name) ?? this.byLegacyName.get(name);
  }

  /** Like find, but throws E_PROFILE_NOT_FOUND listing the known names. */
  get(name: string): Profile {
    const profile = this.find(name);
    if (profile === undefined) {
      throw new RpmlabError(
        "E_PROFILE_NOT_FOUND",
        `unknown device "${name}"; known: ${[...this.byName.keys()].join(", ")}`,
        { field: "device" },
      );
    }
    return profile;
  }

  /** True when `name` is a legacy name that maps to another profile's name. */
  isLegacyName(name: string): boolean {
    return this.byLegacyName.has(name);
  }

  withSensorCode(code: string): Profile[] {
    return this.profiles.filter((p) => p.sensor_code === code);
  }

  /** The spec of a metric as a given profile emits it. */
  metric(profile: Profile, metricName: string): MetricSpec | undefined {
    return profile.metrics.find((m) => m.name === metricName);
  }
}
