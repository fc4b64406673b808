import { clientErrorResponses, describe } from "../../json-schema.ts";
import { SUPPLY_TYPES_JSON_SCHEMA, supplyTypesJson } from "../../schemas/supply-type.ts";
import type { RoutePlugin } from "../../types.ts";

const DESCRIPTION =
  "The ASR supply catalogue (spec 2.7, profiles/supplies.yaml), the same for every account: a flat array (never paginated) in catalogue order, deprecated types included and flagged. `name` is the exact supply_name to order with. Ids are UUID v5 of the name: stable, and distinct from device type ids; hwi-device-types lists them per device type in `supply_types`. Costs are USD decimal strings with two decimals. 403 while the account's ASR module is off.";

/** GET asr/supply-types/, also written asr-supply-types/ (spec 4.5). */
export const supplyTypesRoutes: RoutePlugin = async (app, ctx) => {
  // The catalogue is fixed for the app's life: render once.
  const types = supplyTypesJson(ctx.supplies);
  for (const [path, summary, description] of [
    ["/supply-types/", "List supply types", DESCRIPTION],
    [
      "/asr-supply-types/",
      "List supply types (asr-supply-types spelling)",
      `The spelling spec 4.5 also uses; answers exactly as supply-types/. ${DESCRIPTION}`,
    ],
  ] as const) {
    app.get(
      path,
      {
        schema: {
          tags: ["asr"],
          security: [{ ApiKey: [] }],
          summary,
          description,
          response: {
            200: describe(SUPPLY_TYPES_JSON_SCHEMA, "Every supply type."),
            ...clientErrorResponses(),
          },
        },
      },
      async () => types,
    );
  }
};
