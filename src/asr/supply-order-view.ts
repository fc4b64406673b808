import { toIsoMicros } from "../core/time.ts";
import type { SupplyRequestFilter, SupplyRequestRow } from "../store/types-asr.ts";
import type { SupplyCatalogue, SupplyType } from "./supply-catalogue.ts";

/** A supply type as supply-types/ lists it (spec 2.7). */
export interface SupplyTypeJson {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly image: string;
  readonly up_front_cost: string;
  readonly shipping_cost: string;
  readonly hardware_uuid_required: boolean;
  readonly deprecated: boolean;
}

export function supplyTypeJson(t: SupplyType): SupplyTypeJson {
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    image: t.image,
    up_front_cost: t.upFrontCost,
    shipping_cost: t.shippingCost,
    hardware_uuid_required: t.hardwareUuidRequired,
    deprecated: t.deprecated,
  };
}

/**
 * A supply order as asr/supply-requests/ returns it and as its special-order webhook posts it
 * (spec 2.7: the request's fields, "supply type and shipping information"; 6.2: special orders
 * carry created_on, updated_on, shipped_on and delivered_on; the rest is rpmlab's). The request's
 * text fields come back as sent, "" when not sent (imei is "" when a gateway id is used, 2.7).
 */
export interface SupplyOrderJson {
  readonly id: string;
  readonly order_type: "supply";
  readonly supply_name: string;
  readonly supply_type: SupplyTypeJson | null;
  /** Spec 3: pending (can be deleted) or fulfilled (shipped). */
  readonly status: "pending" | "fulfilled";
  /** Placed by the account's automatic reorder rather than a POST (spec 1.4). */
  readonly auto_reorder: boolean;
  readonly gateway_id: string;
  readonly imei: string;
  readonly related_client_device_id: string | null;
  readonly patient_id: string | null;
  readonly shipping_name: string;
  readonly shipping_address: string;
  readonly shipping_city: string;
  readonly shipping_state: string;
  readonly shipping_zip_code: string;
  readonly notify_emails: string;
  /** Test strips in the box; null for other supplies. */
  readonly strips: number | null;
  /** The prices when ordered; billed at the end of the month it shipped in (spec 1.4). */
  readonly up_front_cost: string;
  readonly shipping_cost: string;
  readonly carrier: string | null;
  readonly tracking_number: string | null;
  readonly tracking_link: string | null;
  readonly created_on: string;
  readonly updated_on: string;
  readonly shipped_on: string | null;
  readonly delivered_on: string | null;
}

const ORDER_TYPE = "supply" as const;

const isoOrNull = (ms: number | null) => (ms === null ? null : toIsoMicros(ms));

export function supplyOrderJson(row: SupplyRequestRow, supplies: SupplyCatalogue): SupplyOrderJson {
  const type = supplies.byId(row.supplyTypeId);
  return {
    id: row.id,
    order_type: ORDER_TYPE,
    supply_name: row.supplyName,
    supply_type: type === undefined ? null : supplyTypeJson(type),
    status: row.status,
    auto_reorder: row.origin === "auto_reorder",
    gateway_id: row.gatewayId ?? "",
    imei: row.imei ?? "",
    related_client_device_id: row.relatedDeviceId,
    patient_id: row.patientExternalId,
    shipping_name: row.shippingName,
    shipping_address: row.shippingAddress,
    shipping_city: row.shippingCity,
    shipping_state: row.shippingState,
    shipping_zip_code: row.shippingZipCode,
    notify_emails: row.notifyEmails ?? "",
    strips: row.strips,
    up_front_cost: row.upFrontCost,
    shipping_cost: row.shippingCost,
    carrier: row.carrier,
    tracking_number: row.trackingNumber,
    tracking_link: row.trackingLink,
    created_on: toIsoMicros(row.created),
    updated_on: toIsoMicros(row.modified),
    shipped_on: isoOrNull(row.shippedOn),
    delivered_on: isoOrNull(row.deliveredOn),
  };
}

/**
 * The filter of supply-requests/?search= (spec 4.5: "text search across all fields"). The store
 * searches the order's own fields; the supply type's come from the catalogue (a file), given as
 * the ids of the types whose text holds the search; order_type is "supply" on every order, so a
 * search that "supply" holds matches them all.
 */
export function supplyOrderSearch(
  text: string,
  supplies: SupplyCatalogue,
): Pick<SupplyRequestFilter, "search" | "searchSupplyTypeIds"> {
  const folded = text.toLowerCase();
  if (ORDER_TYPE.includes(folded)) return {};
  const holds = (value: unknown) =>
    typeof value === "string" && value.toLowerCase().includes(folded);
  const searchSupplyTypeIds = supplies.types
    .filter((type) => Object.values(supplyTypeJson(type)).some(holds))
    .map((type) => type.id);
  return { search: text, searchSupplyTypeIds };
}
