import { labOverview } from "../../../dashboard/overview.ts";
import { DETAIL_SCHEMA } from "../../json-schema.ts";
import { OVERVIEW_JSON } from "../../schemas/overview.ts";
import type { RoutePlugin } from "../../types.ts";

/** GET /lab/v1/overview/: the dashboard's totals, per account. */
export const labOverviewRoutes: RoutePlugin = async (app, ctx) => {
  app.get(
    "/overview/",
    {
      schema: {
        tags: ["lab"],
        security: [{ AdminToken: [] }],
        summary: "Totals per account",
        description:
          "Patients, devices, gateways, measurement records and webhook deliveries by state, per account, and the lab's dead letters: what the dashboard shows, then moves on with /lab/v1/events/.",
        response: { 200: OVERVIEW_JSON, 401: DETAIL_SCHEMA, 403: DETAIL_SCHEMA },
      },
    },
    () => labOverview(ctx.store, ctx.clock.now()),
  );
};
