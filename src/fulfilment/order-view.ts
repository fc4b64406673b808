import type { Ms } from "../store/types.ts";
import type { ShipmentEventRow, ShipmentRow } from "../store/types-shipments.ts";

/**
 * An order as the lab admin API and `rpmlab orders` show it: the shipment behind a device
 * request or a replacement, with its carrier history. Times are epoch ms; the API renders them
 * as ISO 8601. Field names follow spec 6.2 for special orders (created_on, updated_on,
 * shipped_on, delivered_on) and tracking ("expected delivery dates, shipping timestamps and
 * carrier status details").
 */
export interface OrderRecord {
  /** The order's id: the hwi_device_id of a request, the replacement's id. */
  readonly id: string;
  readonly kind: "device" | "replacement";
  readonly account_id: string;
  readonly client_domain: string | null;
  readonly hwi_device_id: string;
  readonly replacement_id: string | null;
  readonly status: string;
  /** Why Client Action Required holds it. */
  readonly reason: string | null;
  readonly require_signature: boolean;
  readonly ship_gateway_only: boolean;
  readonly delivery_type: string | null;
  /** What is in the box, once it shipped. */
  readonly ships_device: boolean | null;
  readonly ships_gateway: boolean | null;
  readonly hardware_uuid: string | null;
  readonly carrier: string | null;
  readonly tracking_number: string | null;
  readonly tracking_link: string | null;
  readonly expected_delivery: Ms | null;
  /** What the simulator does next, and when; null when nothing is scheduled. */
  readonly next_status: string | null;
  readonly next_at: Ms | null;
  readonly created_on: Ms;
  readonly updated_on: Ms;
  readonly shipped_on: Ms | null;
  readonly delivered_on: Ms | null;
  readonly delivered_via: string | null;
  readonly signed_by: string | null;
  /** Why the simulator stopped moving it (e.g. "unlinked"). */
  readonly halted: string | null;
  /** True when the order was cancelled: removed from the store, this answer is its last trace. */
  readonly removed: boolean;
  readonly history: readonly OrderHistoryLine[];
}

export interface OrderHistoryLine {
  readonly status: string;
  readonly at: Ms;
  readonly detail: string;
  readonly location: string | null;
}

export function orderRecord(
  s: ShipmentRow,
  clientDomain: string | null,
  history: readonly ShipmentEventRow[],
): OrderRecord {
  return {
    id: s.id,
    kind: s.kind,
    account_id: s.accountId,
    client_domain: clientDomain,
    hwi_device_id: s.deviceId,
    replacement_id: s.replacementId,
    status: s.status,
    reason: s.reason,
    require_signature: s.requireSignature,
    ship_gateway_only: s.shipGatewayOnly,
    delivery_type: s.deliveryType,
    ships_device: s.shipsDevice,
    ships_gateway: s.shipsGateway,
    hardware_uuid: s.hardwareUuid,
    carrier: s.carrier,
    tracking_number: s.trackingNumber,
    tracking_link: s.trackingLink,
    expected_delivery: s.expectedDelivery,
    next_status: s.nextStatus,
    next_at: s.nextAt,
    created_on: s.created,
    updated_on: s.modified,
    shipped_on: s.shippedOn,
    delivered_on: s.deliveredOn,
    delivered_via: s.deliveredVia,
    signed_by: s.signedBy,
    halted: s.halted,
    removed: false,
    history: history.map((h) => ({
      status: h.status,
      at: h.at,
      detail: h.detail,
      location: h.location,
    })),
  };
}
