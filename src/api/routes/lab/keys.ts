import { createKey, KEY_SHOWN_ONCE, keyJson, listKeys, revokeKey } from "../../../app/accounts.ts";
import { DETAIL_SCHEMA, FIELD_ERRORS_SCHEMA } from "../../json-schema.ts";
import {
  CREATED_KEY_JSON,
  DomainParams,
  KEYS_JSON,
  KeyBody,
  KeyParams,
} from "../../schemas/lab.ts";
import type { RoutePlugin } from "../../types.ts";

const TAGS = ["lab"];
const SECURITY = [{ AdminToken: [] }];
const ERRORS = { 401: DETAIL_SCHEMA, 403: DETAIL_SCHEMA, 404: DETAIL_SCHEMA };

/**
 * /lab/v1/accounts/{clientDomain}/keys/: API keys, shown once at creation, stored hashed,
 * listed by prefix afterwards (wire-formats "Auth and transport behaviour").
 */
export const labKeysRoutes: RoutePlugin = async (app, ctx) => {
  const { store } = ctx;

  app.get(
    "/accounts/:clientDomain/keys/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "List an account's keys (by prefix; revoked ones too)",
        params: DomainParams,
        response: { 200: KEYS_JSON, ...ERRORS },
      },
    },
    async (request) => (await listKeys(store, request.params.clientDomain)).map(keyJson),
  );

  app.post(
    "/accounts/:clientDomain/keys/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Create a key",
        description: `The key is in this response only. ${KEY_SHOWN_ONCE} Its environment is the account's.`,
        params: DomainParams,
        body: KeyBody,
        response: { 201: CREATED_KEY_JSON, 400: FIELD_ERRORS_SCHEMA, ...ERRORS },
      },
    },
    async (request, reply) => {
      const created = await createKey(store, request.params.clientDomain, request.body.name);
      return reply.code(201).send({ ...keyJson(created.apiKey), key: created.key });
    },
  );

  app.delete(
    "/accounts/:clientDomain/keys/:key/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Revoke a key",
        description:
          "The key stops authenticating at once (401). Revoking a revoked key is a no-op. The key is named by its id, its listed prefix or itself.",
        params: KeyParams,
        // 400 keyed by `key`: a prefix two keys share names neither (give the id).
        response: {
          204: { type: "null", description: "Revoked." },
          400: FIELD_ERRORS_SCHEMA,
          ...ERRORS,
        },
      },
    },
    async (request, reply) => {
      await revokeKey(store, request.params.clientDomain, request.params.key);
      return reply.code(204).send();
    },
  );
};
