import { z } from "zod";
import { accountOf } from "../../auth.ts";
import { BODY_IGNORED } from "../../content-types.ts";
import { orNotFound } from "../../errors.ts";
import { clientErrorResponses, DETAIL_SCHEMA, describe } from "../../json-schema.ts";
import { UNLINK_JSON_SCHEMA, unlinkJson } from "../../schemas/gateway.ts";
import type { RoutePlugin } from "../../types.ts";

const NOTHING = "Nothing to unlink: no device or gateway of the account has this id.";

const DESCRIPTION = `Unlinks hardware (spec 3, 4.2): every affected device loses its hardware_uuid (null) and becomes Unlinked, the change is logged (hwi-hardware-uuid-logs), its whitelist entry leaves the gateway, and an Unlinked fulfilment webhook fires with device_id = the prior hardware uuid (spec 6.2); billing for the device stops, and its ASR supply orders still pending are removed (as a DELETE of asr/supply-requests/ removes one; shipped ones are delivered). The gateway stays the account's: gateway-info answers it, devices can be activated on it again, another account's activation on it is refused. The id is a gateway id (12 hex, hyphens and case ignored: every device of that gateway), an hwi_device_id (that device) or an IMEI (the direct-cellular device on it); the answer says which (wire-formats "Unlink"). POST is the documented verb, GET is what a production client calls: both do the same. HEAD is refused (405): a link checker or a proxy probing the URL must not unlink hardware. Repeating succeeds (200) and changes nothing, also for hardware whose devices waited for it (never associated with the account). A gateway a replacement took over from (spec 4.3) is not unlinked by that: its devices moved to the replacement gateway and stay linked there; the 200 that unlinks nothing names that gateway in its detail, the one to unlink. 404 "${NOTHING}" for an id the account never had. A body, if any, is ignored (spec: payload not shown).`;

/** unlink-gateway/{id}/ (spec 4.2; wire-formats "Unlink": both verbs, both id forms). */
export const unlinkRoutes: RoutePlugin = async (app, ctx) => {
  // One route per verb: each its own operation (and operationId) in the OpenAPI document.
  for (const method of ["GET", "POST"] as const) {
    app.route({
      method,
      url: "/unlink-gateway/:id/",
      // Fastify would answer HEAD by running the GET handler, which unlinks; HEAD is "safe"
      // (RFC 9110 §9.2.1), so it falls to the 405 the not-found handler gives.
      exposeHeadRoute: false,
      // A body, if any, is ignored: neither its type (a form post) nor its syntax stops the unlink.
      config: BODY_IGNORED,
      schema: {
        tags: ["hwi-gateways"],
        security: [{ ApiKey: [] }],
        summary: "Unlink a gateway or a device",
        description: DESCRIPTION,
        params: z.object({
          id: z.string().describe("A gateway id, an hwi_device_id or an IMEI."),
        }),
        response: {
          200: describe(UNLINK_JSON_SCHEMA, "What was unlinked."),
          404: describe(DETAIL_SCHEMA, "Unknown id."),
          ...clientErrorResponses(),
        },
      },
      handler: async (request) => {
        const { id } = request.params as { id: string };
        const result = await orNotFound(
          ctx.devices.unlink.unlink(accountOf(request).id, id),
          NOTHING,
        );
        return unlinkJson(result);
      },
    });
  }
};
