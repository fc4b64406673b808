import { z } from "zod";
import { charField, choiceField, drfObject } from "../../../core/drf-fields.ts";
import { isRpmlabError } from "../../../core/errors.ts";
import { issueCredentials } from "../../../mqtt/credentials.ts";
import { apiError } from "../../errors.ts";
import { DETAIL_SCHEMA, FIELD_ERRORS_SCHEMA, toJsonSchema } from "../../json-schema.ts";
import type { RoutePlugin } from "../../types.ts";

const ROLES = ["gateway", "cellular"] as const satisfies readonly [string, ...string[]];

const CredentialBody = drfObject({
  role: choiceField(ROLES).describe(
    "gateway (username = its 12-hex gateway id) or cellular (username = its IMEI).",
  ),
  username: charField({ example: "297056120BD7" }).describe(
    "The gateway id (upper-case, no hyphens) or the 15-digit IMEI.",
  ),
});

const CREDENTIAL_JSON = toJsonSchema(
  z.object({ username: z.string(), role: z.string(), password: z.string() }),
);

/**
 * /lab/v1/mqtt-credentials/: issues the MQTT username and password a simulated gateway or
 * direct-cellular device connects with (README "MQTT"). The password is in this response only;
 * issuing again for the same username rotates it.
 */
export const labMqttCredentialsRoutes: RoutePlugin = async (app, ctx) => {
  app.post(
    "/mqtt-credentials/",
    {
      schema: {
        tags: ["lab"],
        security: [{ AdminToken: [] }],
        summary: "Issue MQTT credentials for a gateway or a direct-cellular device",
        description:
          "The embedded broker accepts them at once; its ACL lets a gateway publish only under rpm/v1/gw/{its id}/ and a device only under rpm/v1/cell/{its IMEI}/. The password is shown once; issuing again rotates it.",
        body: CredentialBody,
        response: {
          201: CREDENTIAL_JSON,
          400: FIELD_ERRORS_SCHEMA,
          401: DETAIL_SCHEMA,
          403: DETAIL_SCHEMA,
        },
      },
    },
    async (request, reply) => {
      const body = request.body as z.infer<typeof CredentialBody>;
      const issued = await issueCredentials(
        ctx.store.mqttCredentials,
        body.role,
        body.username,
      ).catch((error: unknown) => {
        // A username that is not a gateway id or an IMEI is the client's error: 400 on the field.
        if (isRpmlabError(error, "E_CONFIG_INVALID"))
          throw apiError.field("username", error.message);
        throw error;
      });
      // Connections made with the old password end: it is no longer valid (README
      // "Credentials and ACL"), and a leaked one must not outlive its rotation.
      ctx.mqttCredentialIssued(issued.username);
      return reply.code(201).send({
        username: issued.username,
        role: issued.credential.role,
        password: issued.password,
      });
    },
  );
};
