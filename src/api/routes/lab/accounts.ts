import {
  accountJson,
  createAccount,
  findAccount,
  setAsrEnabled,
  setOmitStatusMetrics,
} from "../../../app/accounts.ts";
import type { Environment } from "../../../store/types.ts";
import { DETAIL_SCHEMA, FIELD_ERRORS_SCHEMA } from "../../json-schema.ts";
import {
  ACCOUNT_JSON,
  ACCOUNTS_JSON,
  AccountBody,
  AccountPatchBody,
  DomainParams,
} from "../../schemas/lab.ts";
import type { RoutePlugin } from "../../types.ts";

const TAGS = ["lab"];
const SECURITY = [{ AdminToken: [] }];
const ERRORS = { 401: DETAIL_SCHEMA, 403: DETAIL_SCHEMA };

/** /lab/v1/accounts/: what the vendor's dashboard does for accounts (issue "Accounts, keys"). */
export const labAccountsRoutes: RoutePlugin = async (app, ctx) => {
  const { store } = ctx;

  app.get(
    "/accounts/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "List accounts",
        response: { 200: ACCOUNTS_JSON, ...ERRORS },
      },
    },
    async () => (await store.accounts.list()).map(accountJson),
  );

  app.post(
    "/accounts/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Create an account",
        description:
          "A client domain in one environment; a team that integrates a development and a production environment creates two accounts, each with its own client domain (spec 5.2, 5.3).",
        body: AccountBody,
        response: { 201: ACCOUNT_JSON, 400: FIELD_ERRORS_SCHEMA, ...ERRORS },
      },
    },
    async (request, reply) => {
      const { client_domain, environment, asr_enabled } = request.body;
      const account = await createAccount(store, {
        clientDomain: client_domain,
        environment: environment as Environment | undefined,
        asrEnabled: asr_enabled,
      });
      return reply.code(201).send(accountJson(account));
    },
  );

  app.get(
    "/accounts/:clientDomain/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Get an account",
        params: DomainParams,
        response: { 200: ACCOUNT_JSON, 404: DETAIL_SCHEMA, ...ERRORS },
      },
    },
    async (request) => accountJson(await findAccount(store, request.params.clientDomain)),
  );

  app.patch(
    "/accounts/:clientDomain/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Enable or disable the ASR module; leave status metrics out of webhooks",
        description:
          "asr_enabled: while disabled, every ASR path of the account answers 403 (spec 1.4, 4.5). omit_status_metrics: battery and other status metrics are left out of measurement webhooks (spec 6.3.3: the real service enables it on request).",
        params: DomainParams,
        body: AccountPatchBody,
        response: { 200: ACCOUNT_JSON, 400: FIELD_ERRORS_SCHEMA, 404: DETAIL_SCHEMA, ...ERRORS },
      },
    },
    async (request) => {
      const { clientDomain } = request.params;
      const { asr_enabled: asr, omit_status_metrics: omit } = request.body;
      let account = await findAccount(store, clientDomain);
      if (asr !== undefined) account = await setAsrEnabled(store, clientDomain, asr);
      if (omit !== undefined) account = await setOmitStatusMetrics(store, clientDomain, omit);
      return accountJson(account);
    },
  );
};
