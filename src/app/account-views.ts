import { formatTable } from "../catalogue/text-table.ts";
import type { AccountRow, ApiKeyRow } from "../store/types.ts";
import { accountJson, displayPrefix, keyJson } from "./accounts.ts";

/** Terminal and --json renderings of accounts and keys for the CLI. */

export function renderAccounts(accounts: readonly AccountRow[], json: boolean): string {
  if (json) return JSON.stringify(accounts.map(accountJson), null, 2);
  if (accounts.length === 0)
    return "no accounts (create one: rpmlab accounts create <client-domain>)";
  return formatTable(
    ["CLIENT DOMAIN", "ENVIRONMENT", "ASR", "STATUS METRICS", "CREATED", "ID"],
    accounts.map((a) => {
      const j = accountJson(a);
      return [
        j.client_domain,
        j.environment,
        a.asrEnabled ? "on" : "off",
        a.omitStatusMetrics ? "omitted" : "sent",
        j.created,
        j.id,
      ];
    }),
  );
}

export function renderAccount(account: AccountRow, json: boolean, verb: string): string {
  if (json) return JSON.stringify(accountJson(account), null, 2);
  const status = account.omitStatusMetrics ? ", status metrics left out of webhooks" : "";
  return `${verb} account ${account.clientDomain} (${account.environment}, ASR ${account.asrEnabled ? "on" : "off"}${status}), id ${account.id}`;
}

export function renderKeys(keys: readonly ApiKeyRow[], json: boolean): string {
  if (json) return JSON.stringify(keys.map(keyJson), null, 2);
  if (keys.length === 0) return "no keys";
  return formatTable(
    ["PREFIX", "NAME", "ENVIRONMENT", "CREATED", "REVOKED", "ID"],
    keys.map((k) => {
      const j = keyJson(k);
      return [
        `${displayPrefix(k)}…`,
        k.name ?? "",
        k.environment,
        j.created,
        j.revoked_at ?? "",
        k.id,
      ];
    }),
  );
}
