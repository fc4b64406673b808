import { isAbsolute, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { MS_PER_DAY } from "../core/time.ts";
import { loadScenario } from "../scenario/load.ts";
import type { Progress } from "../scenario/progress.ts";
import type { ScenarioReport } from "../scenario/report.ts";
import { type RunReady, runScenario } from "../scenario/runner.ts";
import type { Scenario } from "../scenario/types.ts";
import { untilSignal } from "./until-signal.ts";

/** The built-in cohort of `rpmlab demo`. */
export const DEMO_FILE = fileURLToPath(new URL("../../scenarios/demo.yaml", import.meta.url));
/** Virtual ms per wall ms: one virtual hour per wall minute, a day of a clinic in 24 minutes. */
export const DEFAULT_DEMO_SPEED = 60;
/**
 * How long the demo runs, in place of the file's own week (which `rpmlab run` takes at full
 * speed, like any shipped scenario): a year, until Ctrl-C at any watchable speed.
 */
export const DEMO_DURATION_MS = 365 * MS_PER_DAY;

export interface DemoOptions {
  /** Virtual ms per wall ms; replaces the scenario's clock.speed. */
  readonly speed: number;
  readonly port: number;
  readonly host?: string;
  readonly seed?: string | number;
  readonly progress?: Progress;
  readonly onReady: (ready: DemoReady) => void;
}

export interface DemoReady extends RunReady {
  /** The demo scenario as run (its speed and duration replaced). */
  readonly scenario: Scenario;
  readonly seed: string | number;
}

/**
 * `rpmlab demo` (issue 7 §3): the lab of `rpmlab serve` with the demo cohort (scenarios/demo.yaml)
 * running in it at `speed`, until SIGINT or SIGTERM (or, at a high speed, the scenario's end).
 * The signal ends the run early through its AbortSignal; the report covers what happened until
 * then. A second signal during the shutdown gets Node's default behaviour (see untilSignal).
 */
export async function runDemo(options: DemoOptions): Promise<ScenarioReport> {
  const loaded = loadScenario(displayPath(DEMO_FILE));
  const scenario: Scenario = {
    ...loaded,
    clock: { ...loaded.clock, speed: options.speed },
    durationMs: DEMO_DURATION_MS,
  };
  const interrupted = new AbortController();
  const finished = new AbortController();
  void untilSignal(finished.signal).then(() => interrupted.abort());
  const seed = options.seed ?? scenario.seed;
  try {
    return await runScenario(scenario, {
      seed,
      port: options.port,
      ...(options.host === undefined ? {} : { host: options.host }),
      ...(options.progress === undefined ? {} : { progress: options.progress }),
      onReady: (ready) => options.onReady({ ...ready, scenario, seed }),
      signal: interrupted.signal,
    });
  } finally {
    // Ended by itself: the signal handlers go, so a later Ctrl-C is Node's again.
    finished.abort();
  }
}

/** The file relative to the working directory when it is inside it (reports name it so). */
function displayPath(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel.startsWith("..") || isAbsolute(rel) ? file : rel;
}
