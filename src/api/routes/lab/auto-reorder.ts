import { z } from "zod";
import { findAccount } from "../../../app/accounts.ts";
import {
  autoReorderJson,
  autoReorderSettings,
  DEFAULT_REORDER_SUPPLY,
  stripSupplyProblem,
} from "../../../asr/auto-reorder-settings.ts";
import type { SupplyCatalogue } from "../../../asr/supply-catalogue.ts";
import { charField, drfObject, integerField } from "../../../core/drf-fields.ts";
import { apiError } from "../../errors.ts";
import { DETAIL_SCHEMA, FIELD_ERRORS_SCHEMA, toJsonSchema } from "../../json-schema.ts";
import { DomainParams } from "../../schemas/lab.ts";
import type { RoutePlugin } from "../../types.ts";

const TAGS = ["lab"];
const SECURITY = [{ AdminToken: [] }];
const ERRORS = { 401: DETAIL_SCHEMA, 403: DETAIL_SCHEMA };
const OFF = "Automatic reorder is off for this account.";

const threshold = (what: string) => integerField({ min: 1 }).nullable().optional().describe(what);

/**
 * The body, its supply_name checked against the catalogue in the same pass as the thresholds'
 * types, so one 400 names every field at fault (autoReorderSettings checks it again for the
 * CLI and scenarios).
 */
const autoReorderBody = (supplies: SupplyCatalogue) =>
  drfObject({
    strips_below: threshold("Order when fewer strips than this are estimated to remain."),
    days_below: threshold(
      "Order when the strips left last fewer days than this at the recent daily use.",
    ),
    supply_name: charField()
      .superRefine((name, ctx) => {
        const problem = stripSupplyProblem(supplies, name);
        if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
      })
      .optional()
      .describe(`The strip supply to order (default "${DEFAULT_REORDER_SUPPLY}").`),
  });

const AUTO_REORDER_JSON = toJsonSchema(
  z.object({
    strips_below: z.number().int().nullable(),
    days_below: z.number().int().nullable(),
    supply_name: z.string(),
  }),
);

/**
 * /lab/v1/accounts/{clientDomain}/auto-reorder/: the thresholds of automatic reordering (spec
 * 1.4: "can place orders automatically when thresholds are reached"), which the vendor's
 * account representative sets; here the lab admin does.
 */
export const labAutoReorderRoutes: RoutePlugin = async (app, ctx) => {
  const { store, supplies } = ctx;
  const path = "/accounts/:clientDomain/auto-reorder/";
  const AutoReorderBody = autoReorderBody(supplies);

  app.get(
    path,
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "An account's automatic reorder thresholds",
        params: DomainParams,
        response: { 200: AUTO_REORDER_JSON, 404: DETAIL_SCHEMA, ...ERRORS },
      },
    },
    async (request) => {
      const account = await findAccount(store, request.params.clientDomain);
      const settings = await store.asrSettings.autoReorder(account.id);
      if (settings === null) throw apiError.notFound(OFF);
      return autoReorderJson(settings);
    },
  );

  app.put(
    path,
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Set automatic reorder thresholds",
        description:
          "Hourly on the lab's clock, each glucometer of the account (ASR module enabled) whose estimated_strips_remaining is below strips_below, or whose strips last fewer than days_below days at its average_measurements_per_day (none left is below any days_below, whatever the use), gets one order of supply_name shipped to its patient's address (auto_reorder: true) — unless a strip order for that meter is still pending or on its way (not delivered). Patients without a full address, or with one verification found Invalid that the client has not confirmed, are skipped (logged).",
        params: DomainParams,
        body: AutoReorderBody,
        response: {
          200: AUTO_REORDER_JSON,
          400: FIELD_ERRORS_SCHEMA,
          404: DETAIL_SCHEMA,
          ...ERRORS,
        },
      },
    },
    async (request) => {
      const account = await findAccount(store, request.params.clientDomain);
      const settings = autoReorderSettings(supplies, request.body);
      await store.asrSettings.setAutoReorder(account.id, settings);
      return autoReorderJson(settings);
    },
  );

  app.delete(
    path,
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Turn automatic reorder off",
        params: DomainParams,
        response: { 204: { type: "null" }, 404: DETAIL_SCHEMA, ...ERRORS },
      },
    },
    async (request, reply) => {
      const account = await findAccount(store, request.params.clientDomain);
      await store.asrSettings.setAutoReorder(account.id, null);
      return reply.code(204).send();
    },
  );
};
