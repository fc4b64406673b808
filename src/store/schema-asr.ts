import type { Ms } from "./schema-columns.ts";

/** Supply replenishment (spec 4.5; migration 0006). */

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
