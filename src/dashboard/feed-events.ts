import type { Catalogue } from "../catalogue/catalogue.ts";
import { toIsoMicros } from "../core/time.ts";
import type { DeviceActivatedEvent, FulfilmentStatusEvent } from "../fulfilment/events.ts";
import type { GatewayRow } from "../store/types-hardware.ts";
import type { DeadLetterRow, MeasurementRow } from "../store/types-ingest.ts";
import type { AttemptOutcome, DeliveryRow } from "../store/types-webhooks.ts";

/**
 * What the live feed (GET /lab/v1/events/) sends, one Server-Sent Event per item: `event:` is
 * `type`, `data:` the rest as JSON, in the API's own style (snake_case, ISO 8601 times). Times
 * are the lab's clock: virtual in `rpmlab demo` and scenario runs.
 */
export type FeedEvent =
  /** The lab's time now: on connecting, then every wall second (the page's clock). */
  | { readonly type: "clock"; readonly now: string }
  /** A committed ingestion batch: the exact count of records it stored. */
  | { readonly type: "batch"; readonly stored: number; readonly at: string }
  /** One stored record (up to FEED_READINGS_PER_BATCH of a batch). */
  | ({ readonly type: "reading" } & ReadingJson)
  | ({ readonly type: "gateway" } & GatewayJson)
  | ({ readonly type: "webhook" } & WebhookJson)
  | ({ readonly type: "fulfilment" } & FulfilmentJson)
  | ({ readonly type: "activated" } & ActivatedJson)
  | ({ readonly type: "dead_letter" } & DeadLetterJson)
  /** This client fell behind (its socket's buffer was full): that many events were not sent. */
  | { readonly type: "dropped"; readonly count: number };

export interface ReadingJson {
  readonly id: number;
  readonly account_id: string | null;
  readonly hwi_device_id: string | null;
  readonly device_name: string | null;
  readonly patient_id: string | null;
  readonly hardware_uuid: string;
  readonly metric: string;
  readonly value_1: number;
  readonly value_2: number | null;
  /** As the device's catalogue entry has them (device-types/ `primary_units`); null: unknown. */
  readonly value_1_units: string | null;
  readonly value_2_units: string | null;
  /** What value 2 is (diastolic, standard deviation …); null with value_2. */
  readonly value_2_meaning: string | null;
  readonly timestamp: string;
}

export interface GatewayJson {
  readonly gateway_uuid: string;
  readonly account_id: string | null;
  /** False for the gateway's last will: the service lost it. */
  readonly online: boolean;
  readonly signal_strength: number;
  readonly last_checkin_time: string | null;
  readonly at: string;
}

export interface WebhookJson {
  readonly delivery_id: string;
  readonly account_id: string;
  readonly webhook_id: string;
  readonly event: string;
  /** After this attempt: delivered, pending (a retry is due), failed or not_retried. */
  readonly state: string;
  readonly attempt: number;
  readonly status_code: number | null;
  readonly error: string | null;
  readonly latency_ms: number;
  readonly at: string;
}

export interface FulfilmentJson {
  readonly account_id: string;
  readonly hwi_device_id: string;
  readonly device_name: string;
  readonly patient_id: string | null;
  readonly status: string;
  readonly reason: string | null;
  readonly tracking_link: string | null;
  readonly at: string;
}

export interface ActivatedJson {
  readonly account_id: string;
  readonly hwi_device_id: string;
  readonly device_name: string;
  readonly patient_id: string | null;
  readonly hardware_uuid: string | null;
  readonly at: string;
}

export interface DeadLetterJson {
  readonly id: number;
  readonly topic: string;
  readonly reason: string;
  readonly at: string;
}

/**
 * A time of the lab's clock as every feed event and the overview carry it: as the API writes
 * times (microseconds and Z), so a reading's time here is the same string as in its record.
 */
export const iso = toIsoMicros;
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

/**
 * A stored record as the feed sends it. Its values' units and meaning come from `catalogue`
 * (the device's profile): a value alone ("198.4", "97/1.35") tells a demo audience neither
 * pounds from kilograms nor a diastolic from a standard deviation.
 */
export function readingJson(row: MeasurementRow, catalogue?: Catalogue): ReadingJson {
  const profile = row.deviceName === null ? undefined : catalogue?.find(row.deviceName);
  const metric = profile === undefined ? undefined : catalogue?.metric(profile, row.metric);
  const second = row.value2 === null ? null : (metric?.value_2 ?? null);
  return {
    id: row.id,
    account_id: row.accountId,
    hwi_device_id: row.deviceId,
    device_name: row.deviceName,
    patient_id: row.patientExternalId,
    hardware_uuid: row.hardwareUuid,
    metric: row.metric,
    value_1: row.value1,
    value_2: row.value2,
    value_1_units: metric?.value_1.units ?? null,
    value_2_units: second?.units ?? null,
    value_2_meaning: second?.meaning ?? null,
    timestamp: iso(row.timestamp),
  };
}

export function gatewayJson(gateway: GatewayRow, online: boolean, at: number): GatewayJson {
  return {
    gateway_uuid: gateway.gatewayUuid,
    account_id: gateway.accountId,
    online,
    signal_strength: gateway.lastSignalStrength,
    last_checkin_time: isoOrNull(gateway.lastCheckinTime),
    at: iso(at),
  };
}

export function webhookJson(delivery: DeliveryRow, outcome: AttemptOutcome): WebhookJson {
  const { attempt } = outcome;
  return {
    delivery_id: delivery.id,
    account_id: delivery.accountId,
    webhook_id: delivery.webhookId,
    event: delivery.event,
    state: outcome.state ?? delivery.state,
    attempt: delivery.attempts + 1,
    status_code: attempt.statusCode,
    error: attempt.error,
    latency_ms: Math.round(attempt.latencyMs * 10) / 10,
    at: iso(attempt.at),
  };
}

export function fulfilmentJson(event: FulfilmentStatusEvent): FulfilmentJson {
  return {
    account_id: event.accountId,
    hwi_device_id: event.device.id,
    device_name: event.device.name,
    patient_id: event.patientExternalId,
    status: event.status,
    reason: event.reason,
    tracking_link: event.trackingLink,
    at: iso(event.at),
  };
}

export function activatedJson(event: DeviceActivatedEvent): ActivatedJson {
  return {
    account_id: event.accountId,
    hwi_device_id: event.device.id,
    device_name: event.device.name,
    patient_id: event.patientExternalId,
    hardware_uuid: event.device.hardwareUuid,
    at: iso(event.at),
  };
}

export function deadLetterJson(row: DeadLetterRow): DeadLetterJson {
  return { id: row.id, topic: row.topic, reason: row.reason, at: iso(row.received) };
}
