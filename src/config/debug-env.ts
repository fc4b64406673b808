/**
 * Whether the `debug` module's loggers may be wanted (DEBUG names some, e.g. DEBUG=mqttjs*):
 * libraries that take a logger of their own are given a no-op one otherwise (mqtt/client.ts).
 */
export function debugLogsWanted(
  env: Readonly<Record<string, string | undefined>> = process.env,
): boolean {
  return env.DEBUG !== undefined;
}
