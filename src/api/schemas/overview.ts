import { z } from "zod";
import { toJsonSchema } from "../json-schema.ts";

const count = (what: string) => z.number().int().describe(what);

/** Wire schema of GET /lab/v1/overview/ (src/dashboard/overview.ts). */
const AccountOverviewOut = z.object({
  id: z.string(),
  client_domain: z.string(),
  environment: z.string(),
  patients: count("Patients of the account."),
  devices: count("Devices of the account, in any status."),
  gateways: count("Gateways associated with the account."),
  measurements: count("Measurement records stored for the account."),
  webhook_deliveries: z
    .object({
      pending: z.number().int(),
      delivered: z.number().int(),
      failed: z.number().int(),
      not_retried: z.number().int(),
    })
    .describe("Deliveries in the log (kept 7 days once finished), by state."),
});

export const OVERVIEW_JSON = toJsonSchema(
  z.object({
    now: z.string().describe("The lab's clock, ISO 8601 (virtual in `rpmlab demo`)."),
    accounts: z.array(AccountOverviewOut),
    dead_letters: count("MQTT messages ingestion kept as dead letters, across the lab."),
  }),
);
