import { z } from "zod";
import { charField, drfObject, integerField, optionalText } from "../../core/drf-fields.ts";
import { documentedBody, iso, toJsonSchema } from "../json-schema.ts";
import { listSchemas, paginationQuery, queryParam, searchParam } from "../pagination.ts";
import { SupplyTypeOut } from "./supply-type.ts";

/** Wire schemas of asr/supply-requests/ and asr/glucometer_supplies/ (spec 2.7, 4.5). */

const text = () => z.string();

export const SupplyOrderOut = z.object({
  id: z.string().describe("The order's id (UUID): what DELETE names."),
  order_type: z
    .literal("supply")
    .describe('Always "supply" (special-order webhooks also carry "replacement").'),
  supply_name: z.string(),
  supply_type: SupplyTypeOut.nullable().describe(
    "The supply type ordered (spec: supply orders carry it).",
  ),
  status: z
    .enum(["pending", "fulfilled"])
    .describe("Spec 3: pending (can be deleted) or fulfilled (shipped)."),
  auto_reorder: z.boolean().describe("Placed by the account's automatic reorder, not a POST."),
  gateway_id: text().describe('As sent; "" when an IMEI is used.'),
  imei: text().describe('As sent; "" when a gateway id is used (spec 2.7).'),
  related_client_device_id: z.string().nullable(),
  patient_id: z
    .string()
    .nullable()
    .describe("external_id of the patient of the related device, or of the hardware's devices."),
  shipping_name: text(),
  shipping_address: text(),
  shipping_city: text(),
  shipping_state: text(),
  shipping_zip_code: text(),
  notify_emails: text(),
  strips: z.number().int().nullable().describe("Test strips in the box; null for other supplies."),
  up_front_cost: text().describe(
    "Price when ordered (USD): billed at the end of the month it shipped in.",
  ),
  shipping_cost: text(),
  carrier: z.string().nullable().describe("ups, fedex or usps, once shipped."),
  tracking_number: z.string().nullable(),
  tracking_link: z.string().nullable(),
  created_on: iso(),
  updated_on: iso(),
  shipped_on: iso().nullable().describe("When it shipped (status fulfilled)."),
  delivered_on: iso().nullable(),
});

export const SUPPLY_ORDER_JSON = toJsonSchema(SupplyOrderOut);
export const SUPPLY_ORDER_LISTS = listSchemas(SUPPLY_ORDER_JSON);

const shipping = (what: string) => charField().describe(`${what} (required).`);

/** Documentation of the POST body; src/asr/supply-requests.ts validates it field by field. */
export const SUPPLY_REQUEST_BODY = documentedBody(
  drfObject({
    supply_name: charField().describe("A supply type's name, exactly (asr/supply-types/)."),
    gateway_id: optionalText(
      "Gateway id for gateway-connected devices; required (or imei) when the type has hardware_uuid_required.",
    ),
    imei: optionalText('For direct-cellular devices; "" when a gateway id is used.'),
    shipping_name: shipping("Recipient"),
    shipping_address: shipping("Street address"),
    shipping_city: shipping("City"),
    shipping_state: shipping("State"),
    shipping_zip_code: shipping("ZIP code"),
    notify_emails: optionalText("Addresses to notify, comma separated."),
    related_client_device_id: optionalText(
      "An HWI device id: links the order to the device; the supply must fit its type.",
    ),
  }),
  "A supply request (spec 2.7).",
);

export const SupplyRequestsQuery = z.object({
  fulfilled: queryParam("true: shipped orders only; false: pending ones only.", {
    example: "false",
  }),
  search: searchParam("Case-insensitive text anywhere in the order's fields."),
  ...paginationQuery,
});

/** DELETE supply-requests/: the order's id here, or in a JSON body `{"id": "…"}`. */
export const SupplyRequestDeleteQuery = z.object({
  id: queryParam('The id of the pending request to remove (or send {"id": "…"} as the body).'),
});

/** Documentation of the body DELETE supply-requests/ may carry; the route reads its `id`. */
export const SUPPLY_REQUEST_DELETE_BODY = documentedBody(
  drfObject({ id: z.string().optional().describe("The id of the pending request to remove.") }),
  'Optional: the order\'s id as `{"id": "…"}`, when `?id=` is not given (a non-blank `?id=` wins).',
);

export const GlucometerSuppliesOut = z.object({
  strips_sent: z
    .number()
    .int()
    .describe("Strips shipped to the patient: the meter's box (50) plus strip orders shipped."),
  estimated_strips_remaining: z
    .number()
    .int()
    .describe(
      "strips_sent minus the glucose readings stored, plus the PUT's offset; never below 0.",
    ),
  average_measurements_per_day: z
    .number()
    .int()
    .describe(
      "Glucose readings per day over the last 14 days, rounded; for a meter first read more recently, the readings after its first per day since it (unrounded time; in its first day, the readings so far).",
    ),
});

export const GLUCOMETER_SUPPLIES_JSON = toJsonSchema(GlucometerSuppliesOut);

export const GLUCOMETER_SUPPLIES_BODY = documentedBody(
  drfObject({
    estimated_strips_remaining: integerField({ min: 0 }).describe(
      "The strips the patient has now (counted, bought, or lost ones taken off).",
    ),
  }),
  "The strips remaining, as the client knows them (spec 4.5).",
);
