import { z } from "zod";
import { accountOf } from "../../auth.ts";
import { orNotFound } from "../../errors.ts";
import {
  clientErrorResponses,
  DETAIL_SCHEMA,
  describe,
  FIELD_ERRORS_SCHEMA,
} from "../../json-schema.ts";
import { lookupFirst } from "../../lookup-first.ts";
import {
  listMode,
  listSchemas,
  paginate,
  paginationQuery,
  queryParam,
  searchParam,
  sendList,
} from "../../pagination.ts";
import {
  ACTIVATION_BODY,
  DEVICE_JSON_SCHEMA,
  DEVICE_UPDATE_BODY,
  deviceJson,
} from "../../schemas/device.ts";
import { deviceIdOf, knownDevice, NO_DEVICE } from "../../services/lookups.ts";
import type { RoutePlugin } from "../../types.ts";

const TAGS = ["hwi-devices"];
const SECURITY = [{ ApiKey: [] }];
const DEVICE = describe(DEVICE_JSON_SCHEMA, "The device record (spec 2.4; wire-formats Devices).");
const LIST = listSchemas(DEVICE_JSON_SCHEMA);
const invalid = describe(FIELD_ERRORS_SCHEMA, "Validation error keyed by field.");
const notFound = describe(DETAIL_SCHEMA, `Unknown hwi_device_id: "${NO_DEVICE}"`);
const params = z.object({ id: z.string().describe("The hwi_device_id (UUID, any case).") });

const ACTIVATION = [
  "Activates a device for a patient (spec 2.4, 4.3), answering 201 with the device record.",
  "With device.hardware_uuid (hardware in hand): status Active on a gateway the lab knows or on an IMEI; on a gateway id the lab has never seen the device is still created (201) with status Unknown Gateway ID, and becomes Active when that gateway first reports.",
  "Without it: a fulfilment request, status Ready to Ship, or Client Action Required when the patient's address is missing or Invalid and not confirmed, or the request duplicates a pending one for the same patient and type (spec 3).",
  'Legacy names are accepted and mapped (Vendor BPM - L → Vendor BPM - Wide Range). A second device with the same sensor code on a gateway is refused (spec 2.8: one per gateway, except inhaler sensors told apart by sensor_id and medication caps with distinct codes): 400 keyed device.hardware_uuid. A gateway another account uses is refused the same way, and so is a device past the 64 the whitelist of a gateway holds (the whitelist downlink limit; each inhaler takes an entry, and devices waiting for an unknown gateway count). The nested patient is found by external_id (ignoring case) or created holding only it (spec 2.1). Errors: 400 keyed by field, nested as the body is ({"device": {"name": [...]}}).',
].join(" ");

const FILTERS = {
  properties__key: queryParam("Devices with a property of this key (e.g. measurement_webhook_id)."),
  properties__value: queryParam(
    "Devices with a property of this value; with properties__key, the same property (devices routed to one webhook, spec 6.3). A UUID matches in any case (webhook ids are stored in lower case).",
  ),
  status: queryParam(
    "shipped (any case): Dropshipped, In Transit and Out for Delivery, not Available for Pickup (spec 3, 6.2); any other value matches the status exactly.",
  ),
  patient__external_id: queryParam("The patient's external_id, exactly."),
  device__hardware_uuid: queryParam("The gateway id or IMEI, exactly."),
  device__hardware_uuid__iexact: queryParam("The gateway id or IMEI, ignoring case."),
  search: searchParam(
    "Case-insensitive substring of the device name, hardware_uuid, sensor_id, status, or the patient's external_id or name.",
  ),
  ...paginationQuery,
};

/** hwi-devices (spec 2.4, 4.3): activation, list, read, patient update. No PATCH, no DELETE. */
export const devicesRoutes: RoutePlugin = async (app, ctx) => {
  const { devices } = ctx;

  app.post(
    "/hwi-devices/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Activate a device",
        description: ACTIVATION,
        body: ACTIVATION_BODY,
        response: { 201: DEVICE, 400: invalid, ...clientErrorResponses() },
      },
    },
    async (request, reply) => {
      const result = await devices.activation.activate(accountOf(request).id, request.body);
      return reply.code(201).send(deviceJson(await devices.views.render(result.device)));
    },
  );

  app.get(
    "/hwi-devices/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "List devices",
        description:
          "Oldest first. Without page a flat array of at most 1000 devices (spec 8); with page the envelope. Filters combine; an empty value means no filter; unknown parameters are ignored.",
        querystring: z.object(FILTERS),
        response: {
          200: LIST.either,
          400: invalid,
          404: describe(DETAIL_SCHEMA, "A page past the end."),
          ...clientErrorResponses(),
        },
      },
    },
    async (request, reply) => {
      const accountId = accountOf(request).id;
      const body = await paginate(
        request,
        listMode(request.query),
        (options) => devices.views.list(accountId, request.query, options),
        deviceJson,
        ctx.config.baseUrl,
      );
      return sendList(reply, body, LIST);
    },
  );

  app.get(
    "/hwi-devices/:id/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Get a device",
        params,
        response: { 200: DEVICE, 404: notFound, ...clientErrorResponses() },
      },
    },
    async (request) => {
      const id = deviceIdOf(request.params.id);
      const record = await orNotFound(devices.views.get(accountOf(request).id, id), NO_DEVICE);
      return deviceJson(record);
    },
  );

  app.put(
    "/hwi-devices/:id/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Update the device's patient",
        description:
          "On this call only fields within the nested patient object change (spec 4.3); every other key is read-only and ignored. patient.external_id attaches that patient (found ignoring case, or created holding only it); the other patient fields update the attached patient record, re-verifying the address when an address field or confirm_address is sent (spec 3); patient null detaches the patient. A device without a patient needs patient.external_id.",
        params,
        body: DEVICE_UPDATE_BODY,
        response: { 200: DEVICE, 400: invalid, 404: notFound, ...clientErrorResponses() },
      },
      preParsing: lookupFirst(({ id }, request) =>
        knownDevice(ctx, accountOf(request).id, id ?? ""),
      ),
    },
    async (request) => {
      const id = deviceIdOf(request.params.id);
      const accountId = accountOf(request).id;
      const result = await orNotFound(
        devices.update.update(accountId, id, request.body),
        NO_DEVICE,
      );
      return deviceJson(await devices.views.render(result.device));
    },
  );
};
