import { type Logger, type LoggerOptions, pino } from "pino";
import { RpmlabError } from "./errors.ts";

export type { Logger };

export interface LoggerConfig {
  level?: LoggerOptions["level"];
  /** Component name, carried on every line as `component`. */
  component?: string;
  /** Destination stream; stderr by default so stdout stays for command output. */
  destination?: NodeJS.WritableStream;
}

/** The lab's structured logger (pino). Create one at the composition root and pass children down. */
export function createLogger(config: LoggerConfig = {}): Logger {
  const options: LoggerOptions = { level: config.level ?? "info", base: undefined };
  const logger = pino(options, config.destination ?? process.stderr);
  return config.component ? logger.child({ component: config.component }) : logger;
}

/** pino's levels, and "silent". */
const LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

/** A log level as a user typed it (`--log-level`): one of pino's, else E_CONFIG_INVALID. */
export function logLevelOf(text: string, option = "--log-level"): string {
  if (LEVELS.includes(text)) return text;
  throw new RpmlabError(
    "E_CONFIG_INVALID",
    `${option} must be one of ${LEVELS.join(", ")}, got "${text}"`,
    { field: option },
  );
}
