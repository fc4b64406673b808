import { type Logger, type LoggerOptions, pino } from "pino";

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
