import { clientErrorResponses, describe } from "../../json-schema.ts";
import { DEVICE_TYPES_JSON_SCHEMA, deviceTypesJson } from "../../schemas/device-type.ts";
import type { RoutePlugin } from "../../types.ts";

/** GET hwi-device-types/ (spec 4.3; wire-formats "Devices"). */
export const deviceTypesRoutes: RoutePlugin = async (app, ctx) => {
  // The catalogue is fixed for the app's life: render once.
  const types = deviceTypesJson(ctx.catalogue, ctx.supplies);
  app.get(
    "/hwi-device-types/",
    {
      schema: {
        tags: ["hwi-devices"],
        security: [{ ApiKey: [] }],
        summary: "List device types",
        description:
          "The device names valid for the account (every type of the catalogue, spec 2.8), to activate devices with; legacy names (Vendor BPM - L) are accepted on activation but not listed. Always a flat array, by name. Ids are UUID v5 of the name: stable. modules: how the type connects (gateway or cellular); supply_types: the ids of the ASR supply types that fit the type (asr/supply-types/, deprecated ones included), empty for a type without supplies; time_series_data: a measured quantity (true) rather than a flag event.",
        response: {
          200: describe(DEVICE_TYPES_JSON_SCHEMA, "Every device type."),
          ...clientErrorResponses(),
        },
      },
    },
    async () => types,
  );
};
