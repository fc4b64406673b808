import type { Command } from "commander";
import { Lab, type LabInfo, shutdownIncomplete } from "../app/lab.ts";
import { untilSignal } from "../app/until-signal.ts";
import { DEFAULT_BROKER } from "../config/broker-spec.ts";
import { STORE_ENV } from "../config/lab-store.ts";
import { formatRateLimit } from "../config/rate-limit.ts";
import {
  ADMIN_TOKEN_ENV,
  BROKER_ENV,
  DEFAULT_CLIENT_DOMAIN,
  DEFAULT_HOST,
  DEFAULT_HTTP_PORT,
  type ServeConfig,
  type ServeFlags,
  serveConfig,
} from "../config/serve-config.ts";
import { DEFAULT_SERVE_STORE, redactStoreSpec } from "../config/store-spec.ts";
import { createLogger, type Logger, logLevelOf } from "../core/logger.ts";
import type { CliIo } from "./io.ts";

interface Flags extends ServeFlags {
  json?: boolean;
  logLevel?: string;
}

export function registerServeCommand(program: Command, io: CliIo): void {
  program
    .command("serve")
    .description(
      "Run the vendor service: store, MQTT broker, ingestion core and the HWI API, until SIGINT or SIGTERM",
    )
    .option(
      "--store <spec>",
      `memory, sqlite:PATH or postgres://… (default $${STORE_ENV}, else ${DEFAULT_SERVE_STORE})`,
    )
    .option(
      "--broker <spec>",
      `embedded[:port], mqtt://host:port or mqtts://host:port (default $${BROKER_ENV}, else ${DEFAULT_BROKER})`,
    )
    .option("--port <n>", `HTTP port; 0 picks a free one (default ${DEFAULT_HTTP_PORT})`)
    .option("--host <address>", `HTTP address to listen on (default ${DEFAULT_HOST})`)
    .option("--rate-limit <rate>", "per-key limit such as 1/s (the real service's); default off")
    .option("--client-domain <domain>", `account to serve (default ${DEFAULT_CLIENT_DOMAIN})`)
    .option(
      "--admin-token <token>",
      `lab admin token, 16 characters at least (default $${ADMIN_TOKEN_ENV}, else fresh)`,
    )
    .option(
      "--ingest-id <id>",
      "MQTT client id of this ingest process on an external broker (its persistent session), unique per process (default rpmlab-ingest); the embedded broker hands messages over in process",
    )
    .option(
      "--ingest-group <name>",
      "share the external broker's load among the ingest processes given this group ($share/<name>/…); default: one process on a plain subscription, which a broker's persistence keeps across its restarts",
    )
    .option(
      "--fulfilment-config <file>",
      "YAML or JSON file of fulfilment simulator settings (README: Fulfilment)",
    )
    .option(
      "--fulfilment <key=value>",
      "one fulfilment setting, e.g. durations.in_transit=1d..3d or time_scale=1440; repeatable",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      "--webhook-timeout <duration>",
      "limit of each webhook attempt to connect, to answer and between body chunks, e.g. 10s (default 10s)",
    )
    .option(
      "--webhook-concurrency <n>",
      "webhook requests in flight to one endpoint at most (default 8)",
    )
    .option("--log-level <level>", "pino level for the log on stderr", "info")
    .option("--json", "print one JSON line with the connection details once ready")
    .action(async (flags: Flags) => {
      const config = serveConfig(flags);
      const level = logLevelOf(flags.logLevel ?? "info");
      const logger = createLogger({ level, component: "serve" });
      const lab = new Lab(config, logger);
      // Listened for from before the start: a Ctrl-C while the lab starts stops it once started,
      // the store closed cleanly, instead of killing the process with its store mid-write (a
      // second Ctrl-C still does: untilSignal has let go of the signals by then).
      const failed = new AbortController();
      let ready = false;
      const signal = untilSignal(failed.signal).then((received) => {
        if (!ready) logger.warn({ signal: received }, "stopping once started (again: at once)");
        return received;
      });
      const info = await lab.start().catch((error: unknown) => {
        failed.abort();
        throw error;
      });
      ready = true;
      // Printed even when a signal came meanwhile: the key was made, and is shown only here.
      io.out(flags.json ? JSON.stringify(info) : serveBanner(info, config));
      const received = await signal;
      logger.info({ signal: received }, "shutting down");
      await stopServed(lab, logger, received);
    });
}

/**
 * Stops a served lab at `signal`; throws E_SHUTDOWN_INCOMPLETE (exit 1) naming each part that
 * failed to close: a store left unflushed must not look like a clean stop to a script or a
 * service manager.
 */
export async function stopServed(lab: Lab, logger: Logger, signal: string): Promise<void> {
  const failed = await lab.stop();
  if (failed.length > 0) {
    const error = shutdownIncomplete(failed, `stopped on ${signal}`);
    logger.error({ signal, parts: failed.map((f) => f.part) }, error.message);
    throw error;
  }
  // The log's last word: read without the exit status (a journal, an aggregator), it tells a
  // clean stop from a process killed half-way through its shutdown.
  logger.info({ signal }, "stopped");
}

/**
 * What serve prints at start without --json: where everything is, and commands that work as
 * printed (the orders hint carries the admin token the command needs).
 */
export function serveBanner(info: LabInfo, config: ServeConfig): string {
  return [
    `rpmlab serving at ${info.base_url}`,
    `  HWI API:       ${info.base_url}/clients/${info.client_domain}/hwi/hwi-patients/   (the other hwi-… endpoints beside it)`,
    `  API docs:      ${info.base_url}/docs`,
    `  dashboard:     ${info.dashboard_url}`,
    `  client domain: ${info.client_domain}`,
    `  API key:       ${info.api_key}   (shown once: Authorization: Api-Key <key>)`,
    `  admin token:   ${info.admin_token}   (lab admin API: Authorization: Bearer <token>)`,
    `  MQTT broker:   ${info.mqtt_url}`,
    `  store:         ${redactStoreSpec(config.store)}   rate limit: ${formatRateLimit(config.rateLimit)}`,
    `  fulfilment:    seed ${config.fulfilment.seed}, time scale ${config.fulfilment.timeScale}   (rpmlab orders list --url ${info.base_url} --admin-token ${info.admin_token})`,
    "Ctrl-C stops it.",
  ].join("\n");
}
