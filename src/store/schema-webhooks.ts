import type { AutoId, Bool, Json, Ms } from "./schema-columns.ts";

/** The webhook registry, its outbox, deliveries and attempts (issue 4 §1; migrations 0001, 0003). */

export interface WebhooksTable {
  id: string;
  account_id: string;
  endpoint: string;
  auth_header: string | null;
  auth_key: string | null;
  event: string;
  post_as_array: Bool;
  enabled_by_default: Bool;
  /** 0003: HMAC-SHA256 key of the X-Rpmlab-Signature header; null: unsigned. */
  signing_secret: string | null;
  created: Ms;
  modified: Ms;
}

export interface WebhookOutboxTable {
  id: AutoId;
  account_id: string;
  event: string;
  /** {"ranges": [[first, last], …]} (MEASUREMENT) or {"body": …, "hwi_device_id", "patient_id"}. */
  payload: Json;
  created: Ms;
}

export interface WebhookDeliveriesTable {
  id: string;
  account_id: string;
  webhook_id: string;
  event: string;
  /** The JSON text posted. */
  body: string;
  state: string;
  retry: Bool;
  test: Bool;
  attempts: number;
  /** Of `attempts`, the resends a user asked for. */
  manual_attempts: number;
  /** Position among the deliveries created together: the claim order after next_attempt_at. */
  seq: number;
  next_attempt_at: Ms | null;
  /** Pending: next_attempt_at is a dispatcher's claim, when it lapses (migration 0014). */
  claimed: Bool;
  hwi_device_id: string | null;
  patient_id: string | null;
  measurement_ids: Json;
  created: Ms;
  modified: Ms;
}

export interface WebhookAttemptsTable {
  id: AutoId;
  delivery_id: string;
  number: number;
  at: Ms;
  endpoint: string | null;
  status_code: number | null;
  error: string | null;
  latency_ms: number;
  response_snippet: string | null;
  manual: Bool;
}
