/**
 * Plain row types of the store. Timestamps are epoch milliseconds (UTC); rendering to the
 * service's ISO form (src/core/time.ts) is the API's job. Field names are the spec's, camelCased.
 */

/** Epoch milliseconds, UTC. */
export type Ms = number;

/** Spec 5.2: a key belongs to an environment; keys of different environments don't mix. */
export type Environment = "development" | "production";

export interface AccountRow {
  readonly id: string;
  readonly clientDomain: string;
  readonly environment: Environment;
  readonly asrEnabled: boolean;
  /** Spec 6.3.3: status metrics (battery and the like) are left out of measurement webhooks. */
  readonly omitStatusMetrics: boolean;
  readonly created: Ms;
  readonly modified: Ms;
}

export interface NewAccount {
  readonly id?: string;
  readonly clientDomain: string;
  readonly environment: Environment;
  readonly asrEnabled?: boolean;
}

export interface ApiKeyRow {
  readonly id: string;
  readonly accountId: string;
  readonly name: string | null;
  /** First characters of the secret part, for listing; the key itself is never stored. */
  readonly prefix: string;
  readonly environment: Environment;
  readonly created: Ms;
  readonly revokedAt: Ms | null;
}

/** Returned once, at creation: `key` is the only time the plain key exists outside its owner. */
export interface CreatedApiKey {
  readonly key: string;
  readonly apiKey: ApiKeyRow;
}

export interface VerifiedApiKey {
  readonly apiKey: ApiKeyRow;
  readonly account: AccountRow;
}

/** Spec 3: address_status values. */
export type AddressStatus = "Verified" | "Invalid";

/** Spec 2.1, every optional patient field. */
export interface PatientFields {
  readonly name: string | null;
  readonly address: string | null;
  readonly city: string | null;
  readonly state: string | null;
  readonly zipCode: string | null;
  readonly phoneNumber: string | null;
  readonly email: string | null;
  readonly physician: string | null;
  readonly clinicName: string | null;
  readonly careManager: string | null;
  /** Spec 2.1: default true. */
  readonly smsOptIn: boolean;
  readonly confirmAddress: boolean;
  readonly addressStatus: AddressStatus | null;
  readonly addressVerifiedBy: string | null;
}

export interface PatientRow extends PatientFields {
  readonly id: number;
  readonly accountId: string;
  /** As the client sent it; lookups ignore case (spec 2.1). */
  readonly externalId: string;
  readonly created: Ms;
  readonly modified: Ms;
}

export type NewPatient = { readonly externalId: string } & Partial<PatientFields>;
export type PatientPatch = Partial<PatientFields> & { readonly externalId?: string };

/**
 * Spec 3 / 6.2: status=shipped selects these (not Available for Pickup, which is held at a
 * carrier facility).
 */
export const SHIPPED_STATUSES = ["Dropshipped", "In Transit", "Out for Delivery"] as const;

export interface DeviceRow {
  /** hwi_device_id (spec 2.4). */
  readonly id: string;
  readonly accountId: string;
  /** Device type name (spec 2.4 device.name). */
  readonly name: string;
  /** Null for direct-cellular types (spec 2.8). */
  readonly sensorCode: string | null;
  /** Current gateway uuid or IMEI; null once unlinked (spec 3). */
  readonly hardwareUuid: string | null;
  readonly sensorId: string | null;
  readonly patientId: number | null;
  readonly status: string;
  readonly requireSignature: boolean;
  readonly shipGatewayOnly: boolean;
  /** Free JSON (wire-formats device.meta_data). */
  readonly metaData: unknown;
  readonly created: Ms;
  readonly modified: Ms;
}

export interface DeviceWithPatient extends DeviceRow {
  readonly patient: PatientRow | null;
}

export interface NewDevice {
  readonly id?: string;
  readonly name: string;
  readonly sensorCode?: string | null;
  readonly hardwareUuid?: string | null;
  readonly sensorId?: string | null;
  readonly patientId?: number | null;
  readonly status: string;
  readonly requireSignature?: boolean;
  readonly shipGatewayOnly?: boolean;
  readonly metaData?: unknown;
}

export type DevicePatch = Partial<Omit<NewDevice, "id">>;

/** The list filters of hwi-devices (spec 4.3, wire-formats "Devices"). */
export interface DeviceFilter {
  /** properties__key and properties__value match the same property row, as Django does. */
  readonly propertyKey?: string;
  /** One value, or any of several (a UUID as sent and as webhook keys store it). */
  readonly propertyValue?: string | readonly string[];
  /** One status or a set (status=shipped → SHIPPED_STATUSES). */
  readonly status?: string | readonly string[];
  /** patient__external_id: exact. */
  readonly patientExternalId?: string;
  /** device__hardware_uuid: exact. */
  readonly hardwareUuid?: string;
  /** device__hardware_uuid__iexact. */
  readonly hardwareUuidIexact?: string;
  /** Case-insensitive substring over name, hardware uuid, sensor id, status, patient id/name. */
  readonly search?: string;
}

export interface DevicePropertyRow {
  readonly deviceId: string;
  readonly key: string;
  readonly value: string;
  readonly created: Ms;
  readonly modified: Ms;
}

/** A device whose hardware_uuid an unlink or a replacement just changed. */
export interface HardwareChange {
  readonly device: DeviceRow;
  readonly previousHardwareUuid: string | null;
}

/** shipment: a fulfilment request got the hardware it was shipped with (Dropshipped). */
export type HardwareLogReason = "activation" | "update" | "replacement" | "unlink" | "shipment";

/** Fields of hwi-hardware-uuid-logs are "not shown" (spec 2.7): this is rpmlab's choice. */
export interface HardwareLogRow {
  readonly id: number;
  readonly accountId: string;
  readonly deviceId: string;
  readonly previousHardwareUuid: string | null;
  /** The device's patient (external_id) when it left previousHardwareUuid; null without one. */
  readonly previousPatientExternalId: string | null;
  readonly hardwareUuid: string | null;
  readonly reason: HardwareLogReason;
  readonly created: Ms;
}

export interface ListOptions {
  readonly limit?: number;
  readonly offset?: number;
  /** Also compute the total number of matching rows (the envelope's `count`, spec 2.6). */
  readonly count?: boolean;
}

export interface ListResult<T> {
  readonly rows: T[];
  /** Present when `count` was asked for. */
  readonly total?: number;
}
