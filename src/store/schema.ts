import type { Generated } from "kysely";
import type {
  AsrSettingsTable,
  GlucometerSupplyOffsetsTable,
  SupplyRequestsTable,
} from "./schema-asr.ts";
import type { AutoId, Bool, Bytes, Json, Ms } from "./schema-columns.ts";
import type {
  WebhookAttemptsTable,
  WebhookDeliveriesTable,
  WebhookOutboxTable,
  WebhooksTable,
} from "./schema-webhooks.ts";

/**
 * Tables as the database sees them (snake_case, the spec's field names). Both dialects share
 * these types; dialect.ts converts the few column kinds they store differently
 * (schema-columns.ts). The webhook and supply tables are in schema-webhooks.ts and
 * schema-asr.ts.
 */

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
