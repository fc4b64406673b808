import { z } from "zod";
import { toIsoMicros } from "../../core/time.ts";
import type { GatewayInfo, GatewayListItem } from "../../fulfilment/gateways.ts";
import type { UnlinkResult } from "../../fulfilment/unlink.ts";
import { iso, toJsonSchema } from "../json-schema.ts";
import { listSchemas } from "../pagination.ts";

/** Gateways (spec 2.2, 2.3) and unlink answers (wire-formats "Unlink"). */

const isoOrNull = (ms: number | null) => (ms === null ? null : toIsoMicros(ms));

const signal = z.number().int().min(0).max(30).describe("0 to 30 (spec 8).");

export const GatewayListItemOut = z.object({
  gateway_uuid: z.string().describe("12 upper-case hex characters, no hyphens."),
  last_signal_strength: signal.describe(
    "0 to 30, as the gateway reported at its last check-in; 0 when it has not checked in within the last hour (spec 2.3).",
  ),
  last_measurement: iso().nullable().describe("Null when the gateway never sent a measurement."),
  shipped_on: iso().nullable().describe("Set when the gateway was dropshipped."),
  assigned_on: iso().nullable().describe("When the gateway was assigned to the account."),
});

export const GATEWAY_LISTS = listSchemas(toJsonSchema(GatewayListItemOut));

export function gatewayListItemJson(g: GatewayListItem): z.output<typeof GatewayListItemOut> {
  return {
    gateway_uuid: g.gateway_uuid,
    last_signal_strength: g.last_signal_strength,
    last_measurement: isoOrNull(g.last_measurement),
    shipped_on: isoOrNull(g.shipped_on),
    assigned_on: isoOrNull(g.assigned_on),
  };
}

export const GatewayInfoOut = z.object({
  gateway_uuid: z.string(),
  firmware_version: z.string().nullable().describe("Null until the gateway reported it."),
  bootloader_version: z.string().nullable(),
  provisioned: z.boolean().describe("false: provisioning is not complete."),
  last_signal_strength: signal.describe(
    "0 to 30, as the gateway reported at its last check-in; 0 when it has not checked in within the last hour (the lab's 'recently', spec 2.3) or its last will said it went offline.",
  ),
  last_checkin_time: iso().nullable().describe("Null if it never connected."),
  assigned_on: iso().nullable(),
  shipped_on: iso().nullable(),
  whitelisted_devices: z.array(
    z.object({
      sensor_code: z.string(),
      mac_address: z.string().describe("12 characters, no separators."),
      whitelist_status: z.enum(["RE", "CO"]).describe("RE (Requested) or CO (Confirmed)."),
      created: iso(),
      modified: iso(),
    }),
  ),
  properties: z.array(z.unknown()).describe("Item shape not specified (spec 2.3)."),
});

export const GATEWAY_INFO_JSON_SCHEMA = toJsonSchema(GatewayInfoOut);

export function gatewayInfoJson(g: GatewayInfo): z.output<typeof GatewayInfoOut> {
  return {
    ...g,
    last_checkin_time: isoOrNull(g.last_checkin_time),
    assigned_on: isoOrNull(g.assigned_on),
    shipped_on: isoOrNull(g.shipped_on),
    whitelisted_devices: g.whitelisted_devices.map((w) => ({
      ...w,
      created: toIsoMicros(w.created),
      modified: toIsoMicros(w.modified),
    })),
    properties: [...g.properties],
  };
}

export const UnlinkOut = z.object({
  detail: z.string().describe("What happened, in words."),
  unlinked_by: z
    .enum(["hwi_device_id", "gateway_id", "imei"])
    .describe("Which kind of id the path held."),
  id: z.string().describe("That id, canonical (gateway ids upper case without hyphens)."),
  devices: z
    .array(
      z.object({
        hwi_device_id: z.string(),
        previous_hardware_uuid: z.string().nullable(),
        status: z.string().describe("Unlinked."),
      }),
    )
    .describe("The devices this call unlinked; empty when they were unlinked already."),
});

export const UNLINK_JSON_SCHEMA = toJsonSchema(UnlinkOut);

const KIND: Record<UnlinkResult["by"], string> = {
  hwi_device_id: "device",
  gateway_id: "gateway",
  imei: "IMEI",
};

export function unlinkJson(r: UnlinkResult): z.output<typeof UnlinkOut> {
  const n = r.devices.length;
  const what = `${KIND[r.by]} ${r.id}`;
  return {
    detail:
      n > 0
        ? `Unlinked ${n} device${n === 1 ? "" : "s"} of ${what}.`
        : r.replacedBy !== undefined
          ? `Nothing to unlink on ${what}: it was replaced by ${r.replacedBy}, which its devices moved to (spec 4.3); unlink ${r.replacedBy} to unlink them.`
          : `Nothing to unlink on ${what}: already unlinked.`,
    unlinked_by: r.by,
    id: r.id,
    devices: r.devices.map((d) => ({
      hwi_device_id: d.device.id,
      previous_hardware_uuid: d.previousHardwareUuid,
      status: d.device.status,
    })),
  };
}
