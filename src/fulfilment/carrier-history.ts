import type { ShipmentRow } from "../store/types-shipments.ts";
import { PICKED_UP, type ShipmentStep } from "./shipment-flow.ts";

/**
 * The carrier history's lines (spec 6.2: shipment tracking carries "carrier status details"):
 * what a tracking page would show for each step of a shipment.
 */

const CARRIER_NAMES: Readonly<Record<string, string>> = {
  ups: "UPS",
  fedex: "FedEx",
  usps: "USPS",
};

/** The carrier history's line for a step (what a tracking page shows). */
export function describeStep(shipment: ShipmentRow, step: ShipmentStep): string {
  const carrier = CARRIER_NAMES[shipment.carrier ?? ""] ?? "the carrier";
  switch (step) {
    case "Client Action Required":
      return `Held for the client: ${shipment.reason ?? "action required"}`;
    case "On Hold":
      return "On hold: out of stock at the warehouse";
    case "Ready to Ship":
      return "Order accepted, ready to ship";
    case "Dropshipped":
      return `Shipped with ${carrier}, tracking number ${shipment.trackingNumber}`;
    case "In Transit":
      return shipment.scansDone <= 1 ? `Picked up by ${carrier}` : "Arrived at carrier facility";
    case "Out for Delivery":
      return shipment.attempts > 1
        ? `Out for delivery (attempt ${shipment.attempts})`
        : "Out for delivery";
    case "Delivery Issue":
      return shipment.requireSignature
        ? "Delivery attempted: signature required, no one available to sign"
        : "Delivery attempted: the address could not be accessed";
    case "Available for Pickup":
      return `Held at ${carrier} facility for pickup`;
    case "Delivered":
      return shipment.signedBy === null
        ? "Delivered, left at the front door"
        : `Delivered, signed for by ${shipment.signedBy}`;
    case PICKED_UP:
      return `Collected by the recipient from the ${carrier} facility`;
    default:
      return step;
  }
}
