import type { Catalogue } from "../catalogue/catalogue.ts";

/**
 * Spec 6.3.3: "battery and other status data can be left out of outbound webhook payloads".
 * Which metrics are status data is the catalogue's `category: status` (battery_percentage,
 * low_battery_event, capsensor_time_updated_event, capsensor_bluetooth_event), per device type.
 */
export class StatusMetrics {
  private readonly byDevice = new Map<string, ReadonlySet<string>>();
  /** For a record whose device type is unknown: status in any device type. */
  private readonly anywhere = new Set<string>();

  constructor(catalogue: Catalogue) {
    for (const profile of catalogue.profiles) {
      const status = new Set(
        profile.metrics.filter((m) => m.category === "status").map((m) => m.name),
      );
      for (const name of [profile.name, ...profile.legacy_names]) this.byDevice.set(name, status);
      for (const metric of status) this.anywhere.add(metric);
    }
  }

  isStatus(deviceName: string | null, metric: string): boolean {
    const own = deviceName === null ? undefined : this.byDevice.get(deviceName);
    return (own ?? this.anywhere).has(metric);
  }
}
