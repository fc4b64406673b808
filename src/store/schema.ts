import type { ColumnType, Generated } from "kysely";

/**
 * Tables as the database sees them (snake_case, the spec's field names). Both dialects share
 * these types; dialect.ts converts the few column kinds they store differently.
 */

/** Epoch ms: integer (SQLite) / bigint (PostgreSQL, parsed to number by the pool). */
type Ms = number;
/** integer 0/1 (SQLite) / boolean (PostgreSQL). */
type Bool = number | boolean;
/** text (SQLite) / json (PostgreSQL): written as JSON text, read as text or parsed value. */
type Json = ColumnType<unknown, string | null, string | null>;
/** blob / bytea. */
type Bytes = Uint8Array;
type AutoId = Generated<number>;

export interface StoreMetaTable {
  key: string;
  value: number;
}

export interface AccountsTable {
  id: string;
  client_domain: string;
  client_domain_lc: string;
  environment: string;
  asr_enabled: Bool;
  /** 0003: leave status metrics out of measurement webhooks (spec 6.3.3). */
  omit_status_metrics: Generated<Bool>;
  created: Ms;
  modified: Ms;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string | null;
  prefix: string;
  key_hash: string;
  environment: string;
  created: Ms;
  revoked_at: Ms | null;
}

export interface PatientsTable {
  id: AutoId;
  account_id: string;
  external_id: string;
  external_id_lc: string;
  name: string | null;
  address: string | null;
  city: string | null;
  state: string | null;
  zip_code: string | null;
  phone_number: string | null;
  email: string | null;
  physician: string | null;
  clinic_name: string | null;
  care_manager: string | null;
  sms_opt_in: Bool;
  confirm_address: Bool;
  address_status: string | null;
  address_verified_by: string | null;
  created: Ms;
  modified: Ms;
}

export interface DevicesTable {
  id: string;
  account_id: string;
  name: string;
  sensor_code: string | null;
  hardware_uuid: string | null;
  hardware_uuid_lc: string | null;
  sensor_id: string | null;
  /** `${sensor_code}/${sensor_id}`: with hardware_uuid_lc, the one-per-gateway unique key. */
  slot: string;
  patient_id: number | null;
  status: string;
  require_signature: Bool;
  ship_gateway_only: Bool;
  meta_data: Json;
  created: Ms;
  modified: Ms;
}

export interface DevicePropertiesTable {
  device_id: string;
  key: string;
  value: string;
  created: Ms;
  modified: Ms;
}

export interface HardwareLogsTable {
  id: AutoId;
  account_id: string;
  device_id: string;
  previous_hardware_uuid: string | null;
  /** lower(previous_hardware_uuid): departures from a hardware, any case (migration 0009). */
  previous_hardware_uuid_lc: string | null;
  /** The external_id of the device's patient when it left previous_hardware_uuid (0009). */
  previous_patient_external_id: string | null;
  hardware_uuid: string | null;
  reason: string;
  created: Ms;
}

export interface ReplacementsTable {
  id: string;
  account_id: string;
  device_id: string;
  device_types: Json;
  shipping_name: string | null;
  shipping_address: string | null;
  shipping_city: string | null;
  shipping_state: string | null;
  shipping_zip_code: string | null;
  notify_emails: string | null;
  previous_hardware_uuid: string | null;
  new_hardware_uuid: string | null;
  status: string | null;
  created: Ms;
  modified: Ms;
  /** Migration 0004: spec 6.2 special-order dates, and the carrier's tracking link. */
  shipped_on: Ms | null;
  delivered_on: Ms | null;
  tracking_link: string | null;
}

export interface GatewaysTable {
  id: AutoId;
  gateway_uuid: string;
  gateway_uuid_lc: string;
  account_id: string | null;
  last_signal_strength: number;
  last_measurement: Ms | null;
  last_checkin_time: Ms | null;
  shipped_on: Ms | null;
  assigned_on: Ms | null;
  firmware_version: string | null;
  bootloader_version: string | null;
  provisioned: Bool;
  properties: Json;
  created: Ms;
  modified: Ms;
}

export interface WhitelistTable {
  gateway_id: number;
  mac_address: string;
  sensor_code: string;
  whitelist_status: string;
  created: Ms;
  modified: Ms;
}

export interface MeasurementsTable {
  id: AutoId;
  account_id: string | null;
  device_id: string | null;
  device_name: string | null;
  patient_external_id: string | null;
  source: string;
  hardware_uuid: string;
  sensor_code: string | null;
  sensor_id: string | null;
  metric: string;
  value_1: number;
  value_2: number | null;
  timestamp: Ms;
  timezone_offset: number;
  estimated_timestamp: Bool;
  filter_params: Json;
  measurement_index: number | null;
  device_log_index: number | null;
  /** The device's own stamp (timestamp unless estimated): the dedupe key's time (0010). */
  device_timestamp: Ms;
  /** measurement_index ?? device_log_index ?? 0: the last part of the dedupe key. */
  dedupe_index: number;
  message_id: string | null;
  characteristic_uuid: string | null;
  raw: Bytes | null;
  created: Ms;
}

export interface IngestedMessagesTable {
  message_id: string;
  received: Ms;
}

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

export interface DeadLettersTable {
  id: AutoId;
  topic: string;
  payload: Bytes;
  reason: string;
  received: Ms;
  message_id: string | null;
  /** 0005: the message-id claim of this uplink was taken when it was dead-lettered. */
  holds_claim: Generated<Bool>;
}

export interface MqttCredentialsTable {
  username: string;
  role: string;
  /** SHA-256 hex of the password. */
  secret_hash: string;
  created: Ms;
  modified: Ms;
}

/** Migration 0004: the fulfilment simulator's shipments (src/fulfilment/shipments*). */
export interface ShipmentsTable {
  id: string;
  account_id: string;
  kind: string;
  device_id: string;
  replacement_id: string | null;
  status: string;
  reason: string | null;
  require_signature: Bool;
  ship_gateway_only: Bool;
  delivery_type: string | null;
  ships_device: Bool | null;
  ships_gateway: Bool | null;
  hardware_uuid: string | null;
  carrier: string | null;
  tracking_number: string | null;
  tracking_link: string | null;
  step: number;
  scans_planned: number;
  scans_done: number;
  transit_ms: Ms;
  attempts: number;
  next_status: string | null;
  next_at: Ms | null;
  expected_delivery: Ms | null;
  shipped_on: Ms | null;
  delivered_on: Ms | null;
  delivered_via: string | null;
  signed_by: string | null;
  halted: string | null;
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

export interface ShipmentEventsTable {
  id: AutoId;
  shipment_id: string;
  status: string;
  at: Ms;
  detail: string;
  location: string | null;
}

export interface BillingPeriodsTable {
  id: AutoId;
  account_id: string;
  device_id: string;
  started: Ms;
  ended: Ms | null;
  basis: string;
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

/** Migration 0006: ASR supply requests (spec 2.7, 4.5). */
export interface SupplyRequestsTable {
  id: string;
  account_id: string;
  supply_type_id: string;
  supply_name: string;
  gateway_id: string | null;
  imei: string | null;
  hardware_uuid: string | null;
  related_device_id: string | null;
  for_device_id: string | null;
  patient_external_id: string | null;
  shipping_name: string;
  shipping_address: string;
  shipping_city: string;
  shipping_state: string;
  shipping_zip_code: string;
  notify_emails: string | null;
  origin: string;
  strips: number | null;
  up_front_cost: string;
  shipping_cost: string;
  status: string;
  step: number;
  next_at: Ms | null;
  carrier: string | null;
  tracking_number: string | null;
  tracking_link: string | null;
  created: Ms;
  modified: Ms;
  shipped_on: Ms | null;
  delivered_on: Ms | null;
}

/** Migration 0006: what a PUT of estimated_strips_remaining left on the strip count. */
export interface GlucometerSupplyOffsetsTable {
  account_id: string;
  device_id: string;
  strips_offset: number;
  modified: Ms;
}

/** Migration 0006: automatic reorder thresholds per account (spec 1.4). */
export interface AsrSettingsTable {
  account_id: string;
  strips_below: number | null;
  days_below: number | null;
  supply_name: string;
  modified: Ms;
}

export interface Database {
  store_meta: StoreMetaTable;
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  patients: PatientsTable;
  devices: DevicesTable;
  device_properties: DevicePropertiesTable;
  hardware_logs: HardwareLogsTable;
  replacements: ReplacementsTable;
  gateways: GatewaysTable;
  gateway_whitelist: WhitelistTable;
  measurements: MeasurementsTable;
  ingested_messages: IngestedMessagesTable;
  webhooks: WebhooksTable;
  dead_letters: DeadLettersTable;
  mqtt_credentials: MqttCredentialsTable;
  shipments: ShipmentsTable;
  shipment_events: ShipmentEventsTable;
  billing_periods: BillingPeriodsTable;
  webhook_outbox: WebhookOutboxTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  supply_requests: SupplyRequestsTable;
  glucometer_supply_offsets: GlucometerSupplyOffsetsTable;
  asr_settings: AsrSettingsTable;
}
