import type { Ms } from "./types.ts";

/**
 * One stored metric record: every field of the wire-formats measurement record, plus what
 * ingestion needs for idempotence and audit.
 */
export interface MeasurementRow {
  /** Integer record id (spec 2.5). */
  readonly id: number;
  /** Null while the gateway is not associated with an account (orphan reading). */
  readonly accountId: string | null;
  /** hwi_device_id; null while orphan. */
  readonly deviceId: string | null;
  readonly deviceName: string | null;
  /** patient_id: the patient's external_id when the reading was taken (spec 6.2: stable). */
  readonly patientExternalId: string | null;
  /** The physical sender (BLE address or IMEI): first part of the dedupe key. */
  readonly source: string;
  /** Gateway uuid or IMEI the reading arrived through. */
  readonly hardwareUuid: string;
  readonly sensorCode: string | null;
  /** Inhaler serial number (spec 2.8), to attach orphans to the right sensor. */
  readonly sensorId: string | null;
  readonly metric: string;
  readonly value1: number;
  /** Null when the metric has no value 2 (rendered "0.00", wire-formats). */
  readonly value2: number | null;
  /** Device clock, UTC (the gateway's receive time when estimated). */
  readonly timestamp: Ms;
  /**
   * The device's own stamp when `timestamp` is an estimate (its clock was unset): the dedupe
   * key's time, so a re-send is known whatever time the first copy was stored at. Defaults to
   * timestamp.
   */
  readonly deviceTimestamp?: Ms;
  /** Whole hours (wire-formats). */
  readonly timezoneOffset: number;
  readonly estimatedTimestamp: boolean;
  readonly filterParams: Readonly<Record<string, unknown>> | null;
  readonly measurementIndex: number | null;
  readonly deviceLogIndex: number | null;
  /** The uplink message that carried it (wire-formats envelope message id). */
  readonly messageId: string | null;
  /** Characteristic the raw bytes were read from, kept for audit (DESIGN "Uplink"). */
  readonly characteristicUuid: string | null;
  readonly raw: Uint8Array | null;
  /** Server receipt time. */
  readonly created: Ms;
}

/**
 * What a measurement GET renders of a stored record (spec 2.5; wire-formats "Measurement
 * record"): the API's queries read these columns only, not what ingestion keeps for idempotence
 * and audit (source, raw bytes, message id…).
 */
export type MeasurementRecord = Pick<
  MeasurementRow,
  | "id"
  | "metric"
  | "deviceName"
  | "deviceId"
  | "patientExternalId"
  | "hardwareUuid"
  | "sensorCode"
  | "value1"
  | "value2"
  | "created"
  | "timestamp"
  | "timezoneOffset"
  | "estimatedTimestamp"
  | "filterParams"
>;

export type NewMeasurement = Omit<MeasurementRow, "id" | "created"> & {
  /** Defaults to the store's clock. */
  readonly created?: Ms;
};

export interface InsertManyResult {
  /**
   * Rows stored by this call, and the orphans a device's duplicate took over (the same reading
   * relayed by another gateway first), as they are now; by id, i.e. in insertion order.
   */
  readonly inserted: MeasurementRow[];
  /**
   * Input positions of records already stored (by an earlier call, or earlier in this batch):
   * same source, metric, timestamp and measurement_index/device_log_index.
   */
  readonly duplicates: number[];
}

interface MeasurementQueryBase {
  readonly accountId: string;
  /** metric__name */
  readonly metric?: string;
  readonly timestampGte?: Ms;
  readonly timestampLt?: Ms;
  readonly createdGte?: Ms;
  readonly createdLt?: Ms;
  readonly limit: number;
  readonly offset?: number;
  /** By timestamp then id; ascending unless told. */
  readonly order?: "asc" | "desc";
  /** Keyset continuation: rows strictly after this one in the chosen order. */
  readonly after?: { readonly timestamp: Ms; readonly id: number };
  /** Also compute the total count of matching rows (ignores limit, offset and after). */
  readonly count?: boolean;
}

/** Spec 4.4 / wire-formats "Measurement queries": one device, or every device of a patient. */
export type MeasurementQuery =
  | (MeasurementQueryBase & { readonly deviceId: string; readonly patientExternalId?: never })
  | (MeasurementQueryBase & { readonly patientExternalId: string; readonly deviceId?: never });

/** Which orphan readings belong to a device being activated. */
export interface OrphanMatch {
  readonly hardwareUuid: string;
  readonly sensorCode: string | null;
  /** When given, only that sensor's readings (inhalers share a gateway). */
  readonly sensorId?: string | null;
  /**
   * When given, only readings of that device type (an IMEI's orphans keep the type their device
   * named, so a glucometer's readings never go to a scale activated on its IMEI later), and
   * those kept before orphans had a type.
   */
  readonly deviceName?: string;
}

export interface OrphanOwner {
  readonly accountId: string;
  readonly deviceId: string;
  readonly deviceName: string | null;
  readonly patientExternalId: string | null;
}

export interface DeadLetterRow {
  readonly id: number;
  readonly topic: string;
  readonly payload: Uint8Array;
  readonly reason: string;
  readonly received: Ms;
  readonly messageId: string | null;
  /**
   * Ingestion claimed the message id (IngestedMessagesRepo) when it kept this dead letter: a
   * replay uses that claim instead of finding the id already ingested (README "Dead letters").
   */
  readonly holdsClaim: boolean;
}

export interface NewDeadLetter {
  readonly topic: string;
  readonly payload: Uint8Array;
  readonly reason: string;
  /** Defaults to the store's clock. */
  readonly received?: Ms;
  readonly messageId?: string | null;
  /** Default false. */
  readonly holdsClaim?: boolean;
}

/** Which dead letters a list returns; every field optional, all given ones must hold. */
export interface DeadLetterFilter {
  /** Topics starting with this text (case-sensitive, as MQTT topics are). */
  readonly topicPrefix?: string;
  /** The gateway uuid or IMEI of the topic: rpm/v1/gw/{source}/… or rpm/v1/cell/{source}/…. */
  readonly source?: string;
  readonly messageId?: string;
  /** Received at or after. */
  readonly since?: Ms;
  /** Received before. */
  readonly until?: Ms;
  /** Newest first (by id, the order they were kept in); default oldest first. */
  readonly newestFirst?: boolean;
}

/** wire-formats "Webhook registry". */
export const WEBHOOK_EVENTS = ["MEASUREMENT", "FULFILLMENT", "SPECIAL_ORDER", "PATIENT"] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export interface WebhookRow {
  readonly id: string;
  readonly accountId: string;
  readonly endpoint: string;
  readonly authHeader: string | null;
  readonly authKey: string | null;
  readonly event: WebhookEvent;
  readonly postAsArray: boolean;
  /** Spec 6.3: default true. */
  readonly enabledByDefault: boolean;
  /** rpmlab's addition: the HMAC-SHA256 key of X-Rpmlab-Signature; null: requests unsigned. */
  readonly signingSecret: string | null;
  readonly created: Ms;
  readonly modified: Ms;
}

export interface NewWebhook {
  readonly id?: string;
  readonly endpoint: string;
  readonly authHeader?: string | null;
  readonly authKey?: string | null;
  readonly event: WebhookEvent;
  readonly postAsArray?: boolean;
  readonly enabledByDefault?: boolean;
  readonly signingSecret?: string | null;
}

export type WebhookPatch = Partial<Omit<NewWebhook, "id">>;
