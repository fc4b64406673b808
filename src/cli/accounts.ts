import type { Command } from "commander";
import { renderAccount, renderAccounts } from "../app/account-views.ts";
import {
  createAccount,
  parseEnvironment,
  setAsrEnabled,
  setOmitStatusMetrics,
} from "../app/accounts.ts";
import { withLabStore } from "../app/lab-store.ts";
import { RpmlabError } from "../core/errors.ts";
import type { CliIo } from "./io.ts";
import { STORE_OPTION_HELP } from "./store-option.ts";

interface StoreFlags {
  store?: string;
  json?: boolean;
}

/** `rpmlab accounts create|list|asr`: client accounts, as the vendor's dashboard keeps them. */
export function registerAccountsCommand(program: Command, io: CliIo): void {
  const accounts = program
    .command("accounts")
    .description("Client accounts: client domain, environment (spec 5.2), ASR module (spec 4.5)");

  accounts
    .command("create")
    .description("Create an account; its API paths are /clients/<client-domain>/hwi/…")
    .argument("<client-domain>", "letters, digits, dots and hyphens, e.g. acme-dev")
    .option("--environment <env>", "development or production", "development")
    .option("--asr", "enable the ASR module (supply orders)")
    .option("--store <spec>", STORE_OPTION_HELP)
    .option("--json", "print the account as JSON")
    .action(async (domain: string, flags: StoreFlags & { environment: string; asr?: boolean }) => {
      const environment = parseEnvironment(flags.environment);
      const account = await withLabStore(flags.store, (store) =>
        createAccount(store, { clientDomain: domain, environment, asrEnabled: flags.asr === true }),
      );
      io.out(renderAccount(account, flags.json === true, "created"));
    });

  accounts
    .command("list")
    .description("List every account")
    .option("--store <spec>", STORE_OPTION_HELP)
    .option("--json", "print a JSON array")
    .action(async (flags: StoreFlags) => {
      const rows = await withLabStore(flags.store, (store) => store.accounts.list());
      io.out(renderAccounts(rows, flags.json === true));
    });

  accounts
    .command("asr")
    .description("Enable or disable the ASR module of an account (while off, ASR paths answer 403)")
    .argument("<client-domain>")
    .argument("<on|off>")
    .option("--store <spec>", STORE_OPTION_HELP)
    .option("--json", "print the account as JSON")
    .action(async (domain: string, state: string, flags: StoreFlags) => {
      if (state !== "on" && state !== "off") {
        throw new RpmlabError("E_USAGE", `expected on or off, got "${state}"`, { field: "state" });
      }
      const account = await withLabStore(flags.store, (store) =>
        setAsrEnabled(store, domain, state === "on"),
      );
      io.out(renderAccount(account, flags.json === true, "updated"));
    });

  accounts
    .command("status-metrics")
    .description(
      "Send or leave out battery and other status metrics in measurement webhooks (spec 6.3.3)",
    )
    .argument("<client-domain>")
    .argument("<send|omit>")
    .option("--store <spec>", STORE_OPTION_HELP)
    .option("--json", "print the account as JSON")
    .action(async (domain: string, choice: string, flags: StoreFlags) => {
      if (choice !== "send" && choice !== "omit") {
        throw new RpmlabError("E_USAGE", `expected send or omit, got "${choice}"`, {
          field: "choice",
        });
      }
      const account = await withLabStore(flags.store, (store) =>
        setOmitStatusMetrics(store, domain, choice === "omit"),
      );
      io.out(renderAccount(account, flags.json === true, "updated"));
    });
}
