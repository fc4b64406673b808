import type { Kysely, Migration, MigrationProvider } from "kysely";
import type { Dialect } from "../dialect.ts";
import { up as initial } from "./0001-initial.ts";
import { up as mqttCredentials } from "./0002-mqtt-credentials.ts";
import { up as webhookDeliveries } from "./0003-webhook-deliveries.ts";
import { up as shipments } from "./0004-shipments.ts";
import { up as deadLetterClaims } from "./0005-dead-letter-claims.ts";
import { up as asr } from "./0006-asr.ts";
import { up as devicesByHardware } from "./0007-devices-by-hardware.ts";
import { up as jsonAsWritten } from "./0008-json-as-written.ts";
import { up as hardwareDepartures } from "./0009-hardware-departures.ts";
import { up as dedupeByDeviceTime } from "./0010-dedupe-by-device-time.ts";
import { up as claimsByAge } from "./0011-claims-by-age.ts";
import { up as manualAttempts } from "./0012-manual-attempts.ts";
import { up as deadLettersByAge } from "./0013-dead-letters-by-age.ts";
import { up as deliveryClaims } from "./0014-delivery-claims.ts";

/**
 * Migrations are listed in code (no filesystem scanning: works from a bundle and from tsx alike)
 * and shared by both dialects. Append new ones; never edit one that has shipped.
 */
export function migrationProvider(d: Dialect): MigrationProvider {
  // biome-ignore lint/suspicious/noExplicitAny: migrations see the schema as it was, untyped.
  const step = (up: (db: Kysely<any>, d: Dialect) => Promise<void>): Migration => ({
    up: (db) => up(db, d),
  });
  return {
    getMigrations: async () => ({
      "0001_initial": step(initial),
      "0002_mqtt_credentials": step(mqttCredentials),
      "0003_webhook_deliveries": step(webhookDeliveries),
      "0004_shipments": step(shipments),
      "0005_dead_letter_claims": step(deadLetterClaims),
      "0006_asr": step(asr),
      "0007_devices_by_hardware": step(devicesByHardware),
      "0008_json_as_written": step(jsonAsWritten),
      "0009_hardware_departures": step(hardwareDepartures),
      "0010_dedupe_by_device_time": step(dedupeByDeviceTime),
      "0011_claims_by_age": step(claimsByAge),
      "0012_manual_attempts": step(manualAttempts),
      "0013_dead_letters_by_age": step(deadLettersByAge),
      "0014_delivery_claims": step(deliveryClaims),
    }),
  };
}
