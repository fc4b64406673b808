import { RpmlabError } from "../core/errors.ts";
import type { MqttCredentialsRepo } from "../store/store.ts";
import type { IssuedMqttCredential, MqttRole } from "../store/types-hardware.ts";
import type { MqttIdentity } from "./acl.ts";
import { GATEWAY_UUID_PATTERN, IMEI_PATTERN } from "./envelope.ts";

/**
 * Credentials the lab issues (issue 4): one per gateway (username = gateway uuid), one per
 * direct-cellular device (username = IMEI), one per lab service (e.g. `rpmlab-ingest`). The
 * password is shown once, in the result; the store keeps its hash.
 */
const USERNAME_RULES: Record<MqttRole, { pattern: RegExp; what: string }> = {
  gateway: {
    pattern: GATEWAY_UUID_PATTERN,
    what: "a gateway uuid of 12 upper-case hex characters",
  },
  cellular: { pattern: IMEI_PATTERN, what: "an IMEI of 15 digits" },
  // Never a gateway uuid or an IMEI, so one namespace holds all three kinds.
  service: { pattern: /^[a-z][a-z0-9-]{0,62}$/, what: "lower-case letters, digits and -" },
};

export async function issueCredentials(
  repo: MqttCredentialsRepo,
  role: MqttRole,
  username: string,
): Promise<IssuedMqttCredential> {
  const rule = USERNAME_RULES[role];
  if (!rule.pattern.test(username)) {
    throw new RpmlabError("E_CONFIG_INVALID", `a ${role} username must be ${rule.what}`, {
      field: "username",
      value: username,
    });
  }
  return repo.issue(username, role);
}

/** How the embedded broker checks a CONNECT's username and password. */
export interface BrokerAuth {
  /** The identity, or null when the username is unknown or the password wrong. */
  authenticate(username: string, password: string): Promise<MqttIdentity | null>;
}

/** Credentials checked against the store (hashes compared in constant time). */
export function storeAuth(repo: MqttCredentialsRepo): BrokerAuth {
  return {
    async authenticate(username, password) {
      const row = await repo.verify(username, password);
      return row === null ? null : { username: row.username, role: row.role };
    },
  };
}
