import type { StoreRepositories } from "../store/store.ts";

/** Replacements of replacements followed at most this far (a loop in the log cannot hang). */
const MAX_HOPS = 16;

/**
 * The gateway that took over from a replaced one, or null. Spec 4.3 (and wire-formats
 * "Replacements"): a replacement gateway updates hardware_uuid on every device of the old
 * gateway; rpmlab's decision (README "Devices"): a device activated on the old gateway id once
 * the replacement shipped (in the mail, or since delivered: the old one goes back to the vendor)
 * belongs with them, on the gateway their last replacement moved them to — followed through
 * later replacements. A gateway that carries devices again is in use, and is its own.
 */
export async function successorGateway(
  repos: Pick<StoreRepositories, "hardwareLogs" | "devices">,
  accountId: string,
  gatewayUuid: string,
): Promise<string | null> {
  let successor: string | null = null;
  let current = gatewayUuid;
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const { rows } = await repos.hardwareLogs.list(accountId, {
      previousHardwareUuid: current,
      reason: "replacement",
    });
    const next = rows.at(-1)?.hardwareUuid ?? null;
    if (next === null || next.toUpperCase() === current.toUpperCase()) break;
    const carries = await repos.devices.list(
      accountId,
      { hardwareUuidIexact: current },
      { limit: 1 },
    );
    if (carries.rows.length > 0) break;
    successor = next;
    current = next;
  }
  return successor;
}
