import type { RouteTable } from "../types.ts";
import { glucometerSuppliesRoutes } from "./asr/glucometer-supplies.ts";
import { supplyRequestsRoutes } from "./asr/supply-requests.ts";
import { supplyTypesRoutes } from "./asr/supply-types.ts";
import { devicePropertiesRoutes } from "./hwi/device-properties.ts";
import { deviceTypesRoutes } from "./hwi/device-types.ts";
import { devicesRoutes } from "./hwi/devices.ts";
import { gatewaysRoutes } from "./hwi/gateways.ts";
import { hardwareLogsRoutes } from "./hwi/hardware-logs.ts";
import { measurementsRoutes } from "./hwi/measurements.ts";
import { patientsRoutes } from "./hwi/patients.ts";
import { replacementsRoutes } from "./hwi/replacements.ts";
import { shipmentsRoutes } from "./hwi/shipments.ts";
import { unlinkRoutes } from "./hwi/unlink.ts";
import { webhooksRoutes } from "./hwi/webhooks.ts";
import { labAccountsRoutes } from "./lab/accounts.ts";
import { labAutoReorderRoutes } from "./lab/auto-reorder.ts";
import { labDeadLettersRoutes } from "./lab/dead-letters.ts";
import { labEventsRoutes } from "./lab/events.ts";
import { labKeysRoutes } from "./lab/keys.ts";
import { labMqttCredentialsRoutes } from "./lab/mqtt-credentials.ts";
import { labOrdersRoutes } from "./lab/orders.ts";
import { labOverviewRoutes } from "./lab/overview.ts";
import { labWebhookDeliveriesRoutes } from "./lab/webhook-deliveries.ts";
import { hwiPatientMeasurementsRoutes, v2MeasurementsRoutes } from "./v2/measurements.ts";

/**
 * Every route plugin the API serves, per scope (types.ts Scope). Adding a resource: write
 * routes/<scope>/<resource>.ts exporting a RoutePlugin and list it here; buildApp registers it
 * under the scope's prefix, behind the scope's authentication, rate limit and error handling.
 */
export const API_ROUTES: RouteTable = {
  hwi: [
    patientsRoutes,
    devicesRoutes,
    devicePropertiesRoutes,
    deviceTypesRoutes,
    gatewaysRoutes,
    unlinkRoutes,
    hardwareLogsRoutes,
    replacementsRoutes,
    shipmentsRoutes,
    measurementsRoutes,
    hwiPatientMeasurementsRoutes,
    webhooksRoutes,
  ],
  asr: [supplyTypesRoutes, supplyRequestsRoutes, glucometerSuppliesRoutes],
  v2: [v2MeasurementsRoutes],
  lab: [
    labAccountsRoutes,
    labAutoReorderRoutes,
    labKeysRoutes,
    labMqttCredentialsRoutes,
    labOrdersRoutes,
    labWebhookDeliveriesRoutes,
    labDeadLettersRoutes,
    labOverviewRoutes,
    labEventsRoutes,
  ],
};
