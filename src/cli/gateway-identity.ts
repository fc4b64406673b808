import type { GatewayRunOptions } from "../app/gateway-run.ts";
import { adminTarget } from "../config/admin-target.ts";
import { MQTT_PASSWORD_ENV, mqttPassword } from "../config/mqtt-password.ts";
import { RpmlabError } from "../core/errors.ts";
import { normalizeGatewayUuid } from "../fulfilment/identifiers.ts";

/** The flags of `rpmlab gateway --broker` that say who the gateway is on the lab's broker. */
export interface GatewayIdentityFlags {
  readonly gatewayUuid?: string | undefined;
  readonly username?: string | undefined;
  readonly password?: string | undefined;
  readonly url?: string | undefined;
  readonly adminToken?: string | undefined;
}

/**
 * `rpmlab gateway --broker`: the gateway's uuid and how it gets its MQTT credentials — given
 * (--username with --password or $RPMLAB_MQTT_PASSWORD), or issued by a running serve
 * (--url/--admin-token). Every inconsistency is E_USAGE naming the flag, or the variable.
 */
export function gatewayIdentity(
  flags: GatewayIdentityFlags,
): Pick<GatewayRunOptions, "gatewayUuid" | "credentials"> {
  const named =
    flags.gatewayUuid === undefined ? undefined : normalizeGatewayUuid(flags.gatewayUuid);
  // The lab's broker knows a gateway by this id (spec 2.2: 12 characters, no hyphens).
  if (named === null) {
    throw new RpmlabError(
      "E_USAGE",
      `--gateway-uuid must be 12 hex digits (hyphens allowed), got "${flags.gatewayUuid}"`,
      { field: "gatewayUuid" },
    );
  }
  if (
    named !== undefined &&
    flags.username !== undefined &&
    named !== flags.username.toUpperCase()
  ) {
    throw new RpmlabError(
      "E_USAGE",
      `--username is the gateway uuid on the lab's broker: ${flags.username} is not --gateway-uuid ${flags.gatewayUuid}`,
      { field: "username" },
    );
  }
  const given = mqttPassword(flags.password);
  if (flags.username === undefined && given?.source === "--password") {
    throw new RpmlabError("E_USAGE", "give --username and --password together", {
      field: "username",
    });
  }
  // Named: a variable left set in the shell is not something the command line shows.
  if (flags.username === undefined && given !== undefined) {
    throw new RpmlabError(
      "E_USAGE",
      `$${MQTT_PASSWORD_ENV} is set: give --username (the gateway uuid) with it, or unset it to have a serve issue credentials (--url/--admin-token)`,
      { field: "username" },
    );
  }
  if (flags.username !== undefined && given === undefined) {
    throw new RpmlabError(
      "E_USAGE",
      `give --username and --password (or $${MQTT_PASSWORD_ENV}) together`,
      { field: "password" },
    );
  }
  return {
    gatewayUuid: named ?? flags.username,
    credentials:
      flags.username !== undefined && given !== undefined
        ? { username: flags.username, password: given.password }
        : { admin: adminTarget(flags) },
  };
}
