import type { Command } from "commander";
import { DEFAULT_DEMO_SPEED, type DemoReady, runDemo } from "../app/demo.ts";
import { DEFAULT_HOST, DEFAULT_HTTP_PORT } from "../config/serve-config.ts";
import { RpmlabError } from "../core/errors.ts";
import { MS_PER_DAY, MS_PER_MINUTE } from "../core/time.ts";
import { createProgress, finishable } from "../scenario/progress.ts";
import { renderJsonLine, renderText } from "../scenario/report.ts";
import { decimal } from "./decimal.ts";
import type { CliIo } from "./io.ts";
import { seedOf } from "./seed.ts";

interface DemoFlags {
  readonly speed: string;
  readonly port: string;
  readonly host?: string;
  readonly seed?: string;
  readonly json?: boolean;
}

/**
 * `rpmlab demo` (issue 7 §3): the lab with a built-in cohort (scenarios/demo.yaml) producing
 * traffic at a watchable speed, until Ctrl-C; prints where to reach it, then the run's report.
 */
export function registerDemoCommand(program: Command, io: CliIo): void {
  program
    .command("demo")
    .description(
      "Run the lab with a built-in demo cohort (scenarios/demo.yaml) at a watchable speed, until Ctrl-C",
    )
    .option(
      "--speed <n>",
      "virtual ms per wall ms; 60 is one virtual hour per wall minute",
      String(DEFAULT_DEMO_SPEED),
    )
    .option("--port <n>", "HTTP port; 0 picks a free one", String(DEFAULT_HTTP_PORT))
    .option("--host <address>", `HTTP address to listen on (default ${DEFAULT_HOST})`)
    .option(
      "--seed <seed>",
      "override the demo's seed, read as a scenario file reads seed: (0x2A is 42)",
    )
    .option(
      "--json",
      "JSON lines on stdout: the connection details once ready, the report (as run --report json) at the end",
    )
    .action(async (flags: DemoFlags) => {
      const speed = parseSpeed(flags.speed);
      const port = parsePort(flags.port);
      const progress = finishable(createProgress(process.stderr));
      const report = await runDemo({
        speed,
        port,
        ...(flags.host === undefined ? {} : { host: flags.host }),
        ...(flags.seed === undefined ? {} : { seed: seedOf(flags.seed) }),
        progress,
        onReady: (ready) => io.out(flags.json ? readyJson(ready, speed) : describe(ready, speed)),
      });
      progress.finish();
      // Ctrl-C is how a demo ends: the report says what happened, whatever it expected. With
      // --json, stdout is JSON lines throughout: the report is a second line, not text after it.
      io.out(flags.json ? renderJsonLine(report) : renderText(report));
    });
}

function parseSpeed(text: string): number {
  const speed = decimal(text);
  if (!Number.isFinite(speed) || speed <= 0) {
    throw new RpmlabError(
      "E_CONFIG_INVALID",
      `--speed must be a decimal number above 0 (virtual ms per wall ms, e.g. 60, 0.5 or 1e-3), got "${text}"`,
      { field: "speed" },
    );
  }
  return speed;
}

function parsePort(text: string): number {
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65_535) {
    throw new RpmlabError(
      "E_CONFIG_INVALID",
      `--port must be a whole number from 0 (any free port) to 65535, got "${text}"`,
      { field: "port" },
    );
  }
  return Number(text);
}

function deliveriesUrl(ready: DemoReady): string {
  return `${ready.lab.base_url}/lab/v1/accounts/${ready.lab.client_domain}/webhook-deliveries/`;
}

/** `rpmlab serve --json`'s line, plus what the demo adds. */
function readyJson(ready: DemoReady, speed: number): string {
  return JSON.stringify({
    ...ready.lab,
    docs_url: `${ready.lab.base_url}/docs`,
    receiver_urls: ready.receiverUrls,
    deliveries_url: deliveriesUrl(ready),
    scenario: ready.scenario.name,
    seed: ready.seed,
    patients: patientCount(ready),
    speed,
  });
}

function describe(ready: DemoReady, speed: number): string {
  const { lab, scenario } = ready;
  const hooks = scenario.accounts.flatMap((a) => a.webhooks.filter((w) => w.url === "lab"));
  return [
    `rpmlab demo: ${patientCount(ready)} patients of scenario ${scenario.name} (${scenario.file}), seed ${ready.seed}, ${pace(speed)}`,
    `  API base URL:  ${lab.base_url}`,
    `  HWI API:       ${lab.base_url}/clients/${lab.client_domain}/hwi/hwi-patients/   (the other hwi-… endpoints beside it)`,
    `  API docs:      ${lab.base_url}/docs`,
    `  dashboard:     ${lab.dashboard_url}`,
    `  client domain: ${lab.client_domain}`,
    `  API key:       ${lab.api_key}   (Authorization: Api-Key <key>)`,
    `  admin token:   ${lab.admin_token}   (lab admin API: Authorization: Bearer <token>)`,
    `  MQTT broker:   ${lab.mqtt_url}`,
    ...hooks.map(
      (w) => `  webhooks:      ${w.events.join(", ")} land at ${ready.receiverUrls[w.id]}`,
    ),
    // Paged: unpaged, the log is one array of every delivery since the start.
    `  deliveries:    curl -H 'Authorization: Bearer ${lab.admin_token}' '${deliveriesUrl(ready)}?page=1'`,
    "Ctrl-C stops it and prints a report.",
  ].join("\n");
}

function patientCount(ready: DemoReady): number {
  return ready.scenario.cohorts.reduce((n, c) => n + c.count, 0);
}

/**
 * "speed 60× (a virtual day every 24 min of wall time)"; below a wall second in ms, to three
 * significant digits: at 10⁸× a day takes 0.864 ms, which to the hundredth of a second read 0 s.
 */
function pace(speed: number): string {
  const wallMs = MS_PER_DAY / speed;
  const every =
    wallMs >= MS_PER_MINUTE
      ? `${Number((wallMs / MS_PER_MINUTE).toFixed(1))} min`
      : wallMs >= 1000
        ? `${Number((wallMs / 1000).toFixed(2))} s`
        : `${Number(wallMs.toPrecision(3))} ms`;
  return `speed ${speed}× (a virtual day every ${every} of wall time)`;
}
