/**
 * The MQTT password of `rpmlab gateway --broker` and `rpmlab device <cellular type> --broker`,
 * from the environment when --password is not given: a command line is readable by every user of
 * the machine (`ps`, /proc/PID/cmdline), as serve's --broker falls back to $RPMLAB_BROKER.
 */
export const MQTT_PASSWORD_ENV = "RPMLAB_MQTT_PASSWORD";

/** Where the password came from, for errors that must name it. */
export type MqttPasswordSource = "--password" | `$${typeof MQTT_PASSWORD_ENV}`;

export interface MqttPassword {
  readonly password: string;
  readonly source: MqttPasswordSource;
}

/**
 * --password, else $RPMLAB_MQTT_PASSWORD (an empty variable counts as unset, as $RPMLAB_BROKER
 * and $RPMLAB_ADMIN_TOKEN), else undefined.
 */
export function mqttPassword(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): MqttPassword | undefined {
  if (flag !== undefined) return { password: flag, source: "--password" };
  const fromEnv = env[MQTT_PASSWORD_ENV];
  if (fromEnv === undefined || fromEnv === "") return undefined;
  return { password: fromEnv, source: `$${MQTT_PASSWORD_ENV}` };
}
