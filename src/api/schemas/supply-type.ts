import { z } from "zod";
import type { SupplyCatalogue } from "../../asr/supply-catalogue.ts";
import { type SupplyTypeJson, supplyTypeJson } from "../../asr/supply-order-view.ts";
import { toJsonSchema } from "../json-schema.ts";

/**
 * asr/supply-types/ elements (spec 2.7 "Supply type"): `{id, name, description, image,
 * up_front_cost, shipping_cost, hardware_uuid_required, deprecated}`, from profiles/supplies.yaml.
 * Decisions (spec: not shown): ids are UUID v5 of the name (stable across runs and labs, never a
 * device type's id); costs are USD decimal strings with two decimals, as DRF renders a
 * DecimalField; deprecated types stay listed, flagged, so an order history can still name them.
 */

export const SupplyTypeOut = z.object({
  id: z.string().describe("UUID v5 of the name: stable."),
  name: z.string().describe("The exact supply_name to order with (POST supply-requests)."),
  description: z.string(),
  image: z.string().describe("Absolute URL of a product picture."),
  up_front_cost: z.string().describe('Decimal string, two decimals (USD), e.g. "15.00".'),
  shipping_cost: z.string().describe('Decimal string, two decimals (USD), e.g. "5.00".'),
  hardware_uuid_required: z
    .boolean()
    .describe("true: the order must carry the device's gateway id or IMEI (spec 2.7)."),
  deprecated: z.boolean().describe("Superseded (e.g. by another pack size); listed, flagged."),
});

export const SUPPLY_TYPES_JSON_SCHEMA = toJsonSchema(z.array(SupplyTypeOut));

/** Every supply type, in catalogue (file) order, deprecated ones included. */
export function supplyTypesJson(supplies: SupplyCatalogue): SupplyTypeJson[] {
  return supplies.types.map(supplyTypeJson);
}
