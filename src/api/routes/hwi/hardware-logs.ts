import { z } from "zod";
import { uuidFilter } from "../../../fulfilment/identifiers.ts";
import { accountOf } from "../../auth.ts";
import {
  clientErrorResponses,
  DETAIL_SCHEMA,
  describe,
  FIELD_ERRORS_SCHEMA,
} from "../../json-schema.ts";
import { listMode, paginate, paginationQuery, queryParam, sendList } from "../../pagination.ts";
import { HARDWARE_LOG_LISTS, hardwareLogJson } from "../../schemas/replacement.ts";
import type { RoutePlugin } from "../../types.ts";

/** GET hwi-hardware-uuid-logs/ (spec 4.3; record fields: spec 2.7 "not shown"). */
export const hardwareLogsRoutes: RoutePlugin = async (app, ctx) => {
  app.get(
    "/hwi-hardware-uuid-logs/",
    {
      schema: {
        tags: ["hwi-devices"],
        security: [{ ApiKey: [] }],
        summary: "List hardware uuid changes",
        description:
          "One record per change of a device's hardware_uuid, oldest first: activation on hardware, update, replacement (spec 4.3) or unlink (spec 4.2), with the previous and new uuid. A flat array of at most 1000 without page (spec 8), the envelope with page.",
        querystring: z.object({
          hwi_device_id: queryParam(
            "Only this device's changes (rpmlab's filter; a value that is no UUID is a 400 keyed hwi_device_id).",
          ),
          ...paginationQuery,
        }),
        response: {
          200: HARDWARE_LOG_LISTS.either,
          400: describe(FIELD_ERRORS_SCHEMA, "A bad page, or an hwi_device_id that is no UUID."),
          404: describe(DETAIL_SCHEMA, "A page past the end."),
          ...clientErrorResponses(),
        },
      },
    },
    async (request, reply) => {
      const accountId = accountOf(request).id;
      const device = uuidFilter("hwi_device_id", request.query.hwi_device_id);
      const filter = device === undefined ? {} : { hwiDeviceId: device };
      const body = await paginate(
        request,
        listMode(request.query),
        (options) => ctx.devices.hardwareLogs.list(accountId, filter, options),
        hardwareLogJson,
        ctx.config.baseUrl,
      );
      return sendList(reply, body, HARDWARE_LOG_LISTS);
    },
  );
};
