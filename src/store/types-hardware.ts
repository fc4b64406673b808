import type { Ms } from "./types.ts";

/** Spec 2.2 + 2.3: one row holds both the list item and the info fields. */
export interface GatewayRow {
  /** 12 characters, no hyphens; matched case-insensitively (spec 4.2). */
  readonly gatewayUuid: string;
  /** Null until the gateway is associated with an account (activation or bulk order). */
  readonly accountId: string | null;
  /** 0–30 (spec 8). */
  readonly lastSignalStrength: number;
  readonly lastMeasurement: Ms | null;
  readonly lastCheckinTime: Ms | null;
  readonly shippedOn: Ms | null;
  readonly assignedOn: Ms | null;
  readonly firmwareVersion: string | null;
  readonly bootloaderVersion: string | null;
  readonly provisioned: boolean;
  /** Spec 2.3: present, item shape not specified. */
  readonly properties: unknown[];
  readonly created: Ms;
  readonly modified: Ms;
}

/** What a gateway reports about itself (status topic, check-ins). */
export interface GatewayStatus {
  readonly lastSignalStrength?: number;
  readonly lastCheckinTime?: Ms | null;
  readonly firmwareVersion?: string | null;
  readonly bootloaderVersion?: string | null;
  readonly provisioned?: boolean;
}

export const GATEWAY_ORDERINGS = [
  "assigned_on",
  "-assigned_on",
  "shipped_on",
  "-shipped_on",
  "last_measurement",
  "-last_measurement",
] as const;
export type GatewayOrdering = (typeof GATEWAY_ORDERINGS)[number];

/** Spec 4.2 hwi-gateways query. */
export interface GatewayFilter {
  readonly ordering?: GatewayOrdering;
  /** last_measurement__isnull */
  readonly lastMeasurementIsNull?: boolean;
  /** shipped_on__isnull */
  readonly shippedOnIsNull?: boolean;
}

/** Spec 2.3 whitelist status: RE (Requested) or CO (Confirmed). */
export type WhitelistStatus = "RE" | "CO";

export interface WhitelistRow {
  readonly gatewayUuid: string;
  readonly macAddress: string;
  readonly sensorCode: string;
  readonly whitelistStatus: WhitelistStatus;
  readonly created: Ms;
  readonly modified: Ms;
}

/** A device a gateway reports holding on its whitelist (spec 2.3, a check-in). */
export interface HeldWhitelistEntry {
  readonly macAddress: string;
  readonly sensorCode: string;
}

/**
 * A held device's identity: its address (any case) and sensor code. A gateway holding an
 * address under another sensor code holds a wrong entry, which confirms nothing.
 */
export function heldKey(device: HeldWhitelistEntry): string {
  return `${device.macAddress.toUpperCase()}/${device.sensorCode}`;
}

export interface WhitelistEntry extends HeldWhitelistEntry {
  readonly whitelistStatus: WhitelistStatus;
}

/** wire-formats "Replacements": the POST body, plus what happened to it. */
export interface ReplacementRow {
  readonly id: string;
  readonly accountId: string;
  readonly deviceId: string;
  /** Names of the replaced hardware, e.g. ["Vendor BPM - Wide Range", "Gateway"]. */
  readonly deviceTypes: string[];
  readonly shippingName: string | null;
  readonly shippingAddress: string | null;
  readonly shippingCity: string | null;
  readonly shippingState: string | null;
  readonly shippingZipCode: string | null;
  readonly notifyEmails: string | null;
  /** The device's hardware_uuid when the replacement was requested. */
  readonly previousHardwareUuid: string | null;
  /** The replacement gateway, once one is assigned. */
  readonly newHardwareUuid: string | null;
  readonly status: string | null;
  readonly created: Ms;
  readonly modified: Ms;
  /** Spec 6.2 special orders: when it shipped (Dropshipped) and reached the patient. */
  readonly shippedOn: Ms | null;
  readonly deliveredOn: Ms | null;
  readonly trackingLink: string | null;
}

export interface NewReplacement {
  readonly id?: string;
  readonly deviceId: string;
  readonly deviceTypes: readonly string[];
  readonly shippingName?: string | null;
  readonly shippingAddress?: string | null;
  readonly shippingCity?: string | null;
  readonly shippingState?: string | null;
  readonly shippingZipCode?: string | null;
  readonly notifyEmails?: string | null;
  readonly previousHardwareUuid?: string | null;
  readonly status?: string | null;
}

export interface ReplacementPatch {
  /** The hardware replaced, as it was when the replacement shipped. */
  readonly previousHardwareUuid?: string | null;
  readonly newHardwareUuid?: string | null;
  readonly status?: string | null;
  readonly shippedOn?: Ms | null;
  readonly deliveredOn?: Ms | null;
  readonly trackingLink?: string | null;
  /** When the change happened, if not now: a shipment's step applied at its due time. */
  readonly modified?: Ms;
}

/**
 * Who an MQTT credential belongs to: a gateway (username = its uuid), a direct-cellular device
 * (username = its IMEI), or one of the lab's own services such as the ingestion core.
 */
export const MQTT_ROLES = ["gateway", "cellular", "service"] as const;
export type MqttRole = (typeof MQTT_ROLES)[number];

export interface MqttCredentialRow {
  readonly username: string;
  readonly role: MqttRole;
  readonly created: Ms;
  /** Last (re)issue: issuing again rotates the password. */
  readonly modified: Ms;
}

/** Returned once, at issue: `password` is the only time the plain secret exists in the lab. */
export interface IssuedMqttCredential {
  readonly username: string;
  readonly password: string;
  readonly credential: MqttCredentialRow;
}
