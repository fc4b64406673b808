import type { Command } from "commander";
import { renderKeys } from "../app/account-views.ts";
import {
  createKey,
  displayPrefix,
  KEY_SHOWN_ONCE,
  keyJson,
  listKeys,
  revokeKey,
} from "../app/accounts.ts";
import { withLabStore } from "../app/lab-store.ts";
import type { CliIo } from "./io.ts";
import { STORE_OPTION_HELP } from "./store-option.ts";

interface StoreFlags {
  store?: string;
  json?: boolean;
}

/** `rpmlab keys create|list|revoke`: API keys, shown once, stored hashed, listed by prefix. */
export function registerKeysCommand(program: Command, io: CliIo): void {
  const keys = program
    .command("keys")
    .description("API keys of an account (Authorization: Api-Key <key>)");

  keys
    .command("create")
    .description("Create a key and print it once: only its hash is kept")
    .argument("<client-domain>")
    .option("--name <name>", "a label to tell keys apart in listings")
    .option("--store <spec>", STORE_OPTION_HELP)
    .option("--json", "print the key record, with the key, as JSON")
    .action(async (domain: string, flags: StoreFlags & { name?: string }) => {
      const created = await withLabStore(flags.store, (store) =>
        createKey(store, domain, flags.name),
      );
      // The key alone on stdout (KEY=$(rpmlab keys create …) works); the warning on stderr.
      io.out(
        flags.json === true
          ? JSON.stringify({ ...keyJson(created.apiKey), key: created.key }, null, 2)
          : created.key,
      );
      io.err(
        `rpmlab: created ${created.apiKey.environment} key ${displayPrefix(created.apiKey)}… (id ${created.apiKey.id}) for ${created.account.clientDomain}. ${KEY_SHOWN_ONCE}`,
      );
    });

  keys
    .command("list")
    .description("List an account's keys by prefix, revoked ones too")
    .argument("<client-domain>")
    .option("--store <spec>", STORE_OPTION_HELP)
    .option("--json", "print a JSON array")
    .action(async (domain: string, flags: StoreFlags) => {
      const rows = await withLabStore(flags.store, (store) => listKeys(store, domain));
      io.out(renderKeys(rows, flags.json === true));
    });

  keys
    .command("revoke")
    .description("Revoke a key: it stops authenticating at once")
    .argument("<client-domain>")
    .argument("<key-id-or-prefix>", "the key's id, its listed prefix (rpm_dev_AbCd1234) or the key")
    .option("--store <spec>", STORE_OPTION_HELP)
    .option("--json", "print the key record as JSON, with already_revoked")
    .action(async (domain: string, ref: string, flags: StoreFlags) => {
      const result = await withLabStore(flags.store, (store) => revokeKey(store, domain, ref));
      const key = keyJson(result.apiKey);
      if (flags.json === true) {
        io.out(JSON.stringify({ ...key, already_revoked: result.alreadyRevoked }, null, 2));
      } else {
        io.out(
          result.alreadyRevoked
            ? `key ${key.prefix}… (id ${key.id}) was already revoked at ${key.revoked_at}`
            : `revoked key ${key.prefix}… (id ${key.id})`,
        );
      }
    });
}
