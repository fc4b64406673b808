import type { Clock } from "../core/clock.ts";
import { MESSAGES } from "../core/drf-fields.ts";
import { RpmlabError } from "../core/errors.ts";
import { FieldErrorCollector } from "../core/field-errors.ts";
import type { Store } from "../store/store.ts";
import type { ListOptions, ListResult, Ms } from "../store/types.ts";
import {
  GATEWAY_ORDERINGS,
  type GatewayFilter,
  type GatewayOrdering,
  type GatewayRow,
  type WhitelistStatus,
} from "../store/types-hardware.ts";
import type { QueryValue } from "./device-view.ts";
import { normalizeGatewayUuid } from "./identifiers.ts";

/** Spec 2.2: an hwi-gateways list item. Times are epoch ms. */
export interface GatewayListItem {
  readonly gateway_uuid: string;
  readonly last_signal_strength: number;
  readonly last_measurement: Ms | null;
  readonly shipped_on: Ms | null;
  readonly assigned_on: Ms | null;
}

/** Spec 2.3 whitelisted device item. */
export interface WhitelistedDevice {
  readonly sensor_code: string;
  readonly mac_address: string;
  readonly whitelist_status: WhitelistStatus;
  readonly created: Ms;
  readonly modified: Ms;
}

/** Spec 2.3 gateway-info. Versions are null until the gateway reported them. */
export interface GatewayInfo {
  readonly gateway_uuid: string;
  readonly firmware_version: string | null;
  readonly bootloader_version: string | null;
  readonly provisioned: boolean;
  readonly last_signal_strength: number;
  readonly last_checkin_time: Ms | null;
  readonly assigned_on: Ms | null;
  readonly shipped_on: Ms | null;
  readonly whitelisted_devices: readonly WhitelistedDevice[];
  /** Spec 2.3: present, item shape not specified; what the gateway row holds. */
  readonly properties: readonly unknown[];
}

const BOOLEAN_VALUES: Record<string, boolean> = { true: true, "1": true, false: false, "0": false };

/**
 * Spec 4.2 hwi-gateways query: ordering (assigned_on, shipped_on or last_measurement, "-" for
 * descending; one field), last_measurement__isnull and shipped_on__isnull (true/false, 1/0, any
 * case; spec shows last_measurement__isnull=true and shipped_on__isnull=false, both directions
 * work). A bad value is a 400 keyed by its parameter; empty values and unknown keys are ignored.
 */
export function gatewayFilterOf(query: Readonly<Record<string, QueryValue>>): GatewayFilter {
  const errors = new FieldErrorCollector();
  const value = (key: string): string | undefined => {
    const raw = query[key];
    const last = typeof raw === "string" ? raw : raw?.[raw.length - 1];
    return last === undefined || last.trim() === "" ? undefined : last.trim();
  };
  const filter: { -readonly [K in keyof GatewayFilter]: GatewayFilter[K] } = {};
  const ordering = value("ordering");
  if (ordering !== undefined) {
    if ((GATEWAY_ORDERINGS as readonly string[]).includes(ordering)) {
      filter.ordering = ordering as GatewayOrdering;
    } else {
      errors.add(
        "ordering",
        `"${ordering}" is not a valid ordering. Choose one of assigned_on, shipped_on, last_measurement, prefixed with "-" for descending order.`,
      );
    }
  }
  for (const [param, field] of [
    ["last_measurement__isnull", "lastMeasurementIsNull"],
    ["shipped_on__isnull", "shippedOnIsNull"],
  ] as const) {
    const raw = value(param);
    if (raw === undefined) continue;
    const flag = BOOLEAN_VALUES[raw.toLowerCase()];
    if (flag === undefined) errors.add(param, MESSAGES.boolean);
    else filter[field] = flag;
  }
  errors.throwIfAny();
  return filter;
}

/**
 * Spec 2.3: "0 typically means the gateway has not connected recently enough to report a current
 * signal". The lab's "recently": a check-in within the last hour. Simulated gateways check in
 * every 15 minutes (src/gateway), so a gateway reads 0 after four missed check-ins, or at once
 * when its last will says it went offline.
 */
export const SIGNAL_FRESH_FOR_MS = 60 * 60_000;

/** The signal strength to report now: the last one, or 0 when it is stale (spec 2.3). */
export function currentSignal(g: GatewayRow, now: Ms): number {
  const fresh = g.lastCheckinTime !== null && now - g.lastCheckinTime <= SIGNAL_FRESH_FOR_MS;
  return fresh ? g.lastSignalStrength : 0;
}

function listItem(g: GatewayRow, now: Ms): GatewayListItem {
  return {
    gateway_uuid: g.gatewayUuid,
    last_signal_strength: currentSignal(g, now),
    last_measurement: g.lastMeasurement,
    shipped_on: g.shippedOn,
    assigned_on: g.assignedOn,
  };
}

/** hwi-gateways and gateway-info (spec 2.2, 2.3, 4.2). */
export class Gateways {
  constructor(private readonly deps: { readonly store: Store; readonly clock: Clock }) {}

  async list(
    accountId: string,
    query: Readonly<Record<string, QueryValue>>,
    page?: ListOptions,
  ): Promise<ListResult<GatewayListItem>> {
    const result = await this.deps.store.gateways.list(accountId, gatewayFilterOf(query), page);
    const now = this.deps.clock.now();
    const rows = result.rows.map((g) => listItem(g, now));
    return result.total === undefined ? { rows } : { rows, total: result.total };
  }

  /**
   * Spec 4.2: the id without hyphens, matched ignoring case; not found (404) until the gateway
   * is associated with this account (activation on a known gateway, adoption, or shipping).
   */
  async info(accountId: string, rawUuid: string): Promise<GatewayInfo> {
    const uuid = normalizeGatewayUuid(rawUuid);
    const gateway =
      uuid === null ? null : await this.deps.store.gateways.getForAccount(accountId, uuid);
    if (gateway === null) {
      throw new RpmlabError("E_STORE_NOT_FOUND", `gateway ${rawUuid} not found`, {
        gateway_uuid: rawUuid,
      });
    }
    const whitelist = await this.deps.store.whitelist.list(gateway.gatewayUuid);
    return {
      gateway_uuid: gateway.gatewayUuid,
      firmware_version: gateway.firmwareVersion,
      bootloader_version: gateway.bootloaderVersion,
      provisioned: gateway.provisioned,
      last_signal_strength: currentSignal(gateway, this.deps.clock.now()),
      last_checkin_time: gateway.lastCheckinTime,
      assigned_on: gateway.assignedOn,
      shipped_on: gateway.shippedOn,
      whitelisted_devices: whitelist.map((w) => ({
        sensor_code: w.sensorCode,
        mac_address: w.macAddress,
        whitelist_status: w.whitelistStatus,
        created: w.created,
        modified: w.modified,
      })),
      properties: gateway.properties,
    };
  }
}
