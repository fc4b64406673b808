import type { RouteTable } from "../types.ts";
import { patientsRoutes } from "./hwi/patients.ts";
import { labAccountsRoutes } from "./lab/accounts.ts";
import { labKeysRoutes } from "./lab/keys.ts";

/**
 * Every route plugin the API serves, per scope (types.ts Scope). Adding a resource: write
 * routes/<scope>/<resource>.ts exporting a RoutePlugin and list it here; buildApp registers it
 * under the scope's prefix, behind the scope's authentication, rate limit and error handling.
 */
export const API_ROUTES: RouteTable = {
  hwi: [patientsRoutes],
  asr: [],
  v2: [],
  lab: [labAccountsRoutes, labKeysRoutes],
};
