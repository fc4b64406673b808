import type { Command } from "commander";
import { renderAccount, renderAccounts } from "../app/account-views.ts";
import {
  createAccount,
  findAccount,
  parseEnvironment,
  setAsrEnabled,
  setOmitStatusMetrics,
} from "../app/accounts.ts";
import { withLabStore } from "../app/lab-store.ts";
import {
  autoReorderJson,
  autoReorderSettings,
  DEFAULT_REORDER_SUPPLY,
} from "../asr/auto-reorder-settings.ts";
import { SupplyCatalogue } from "../asr/supply-catalogue.ts";
import { parseClientDomain } from "../config/client-domain.ts";
import { MAX_INTEGER_FIELD } from "../core/drf-fields.ts";
import { isRpmlabError, RpmlabError } from "../core/errors.ts";
import type { AutoReorderSettings } from "../store/types-asr.ts";
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
      const clientDomain = parseClientDomain(domain, "<client-domain>");
      const environment = parseEnvironment(flags.environment);
      const account = await withLabStore(
        flags.store,
        (store) =>
          createAccount(store, {
            clientDomain,
            environment,
            asrEnabled: flags.asr === true,
          }),
        // The first command on a new lab: it makes the store.
        { create: true },
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
        throw new RpmlabError(
          "E_USAGE",
          `accounts asr <on|off>: expected on or off, got "${state}"`,
          { field: "state" },
        );
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
        throw new RpmlabError(
          "E_USAGE",
          `accounts status-metrics <send|omit>: expected send or omit, got "${choice}"`,
          {
            field: "choice",
          },
        );
      }
      const account = await withLabStore(flags.store, (store) =>
        setOmitStatusMetrics(store, domain, choice === "omit"),
      );
      io.out(renderAccount(account, flags.json === true, "updated"));
    });

  accounts
    .command("auto-reorder")
    .description(
      "Automatic strip reorder of an account (spec 1.4): order when a glucometer's estimate drops below a threshold",
    )
    .argument("<client-domain>")
    .option("--strips-below <n>", "order when fewer strips than this are estimated to remain")
    .option("--days-below <n>", "order when the strips last fewer days than this")
    .option("--supply <name>", `the strip supply to order (default "${DEFAULT_REORDER_SUPPLY}")`)
    .option("--off", "turn automatic reorder off")
    .option("--store <spec>", STORE_OPTION_HELP)
    .option("--json", "print the thresholds as JSON")
    .action(async (domain: string, flags: StoreFlags & AutoReorderFlags) => {
      const thresholds = [flags.stripsBelow, flags.daysBelow, flags.supply];
      if (flags.off === true && thresholds.some((t) => t !== undefined)) {
        throw new RpmlabError(
          "E_USAGE",
          "--off turns automatic reorder off: give it alone, without --strips-below, --days-below or --supply",
        );
      }
      const settings = flags.off === true ? null : autoReorderFromFlags(flags);
      await withLabStore(flags.store, async (store) => {
        const account = await findAccount(store, domain);
        await store.asrSettings.setAutoReorder(account.id, settings);
      });
      if (flags.json === true) {
        io.out(JSON.stringify(settings === null ? null : autoReorderJson(settings), null, 2));
      } else if (settings === null) {
        io.out(`automatic reorder of ${domain}: off`);
      } else {
        const rules = [
          settings.stripsBelow === null ? [] : [`fewer than ${settings.stripsBelow} strips`],
          settings.daysBelow === null ? [] : [`fewer than ${settings.daysBelow} days of strips`],
        ].flat();
        io.out(`automatic reorder of ${domain}: ${settings.supplyName} at ${rules.join(" or ")}`);
      }
    });
}

interface AutoReorderFlags {
  stripsBelow?: string;
  daysBelow?: string;
  supply?: string;
  off?: boolean;
}

const FLAG_OF: Record<string, string> = {
  strips_below: "--strips-below",
  days_below: "--days-below",
  supply_name: "--supply",
};

/**
 * The flags as thresholds. A threshold that is not a whole number in range is E_CONFIG_INVALID
 * naming the flag, as every number option (README "Commands"); the other refusals are E_USAGE.
 * Both exit 2.
 */
function autoReorderFromFlags(flags: AutoReorderFlags): AutoReorderSettings {
  const threshold = (flag: string, text: string | undefined) => {
    if (text === undefined) return undefined;
    const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < 1 || n > MAX_INTEGER_FIELD) {
      throw new RpmlabError(
        "E_CONFIG_INVALID",
        `${flag} must be a whole number from 1 to ${MAX_INTEGER_FIELD}, got "${text}"`,
        { field: flag },
      );
    }
    return n;
  };
  const stripsBelow = threshold("--strips-below", flags.stripsBelow);
  const daysBelow = threshold("--days-below", flags.daysBelow);
  if (stripsBelow === undefined && daysBelow === undefined) {
    throw new RpmlabError(
      "E_USAGE",
      "give --strips-below, --days-below or both; --off turns it off",
    );
  }
  try {
    return autoReorderSettings(SupplyCatalogue.load(), {
      strips_below: stripsBelow,
      days_below: daysBelow,
      ...(flags.supply === undefined ? {} : { supply_name: flags.supply }),
    });
  } catch (error) {
    const fields = isRpmlabError(error, "E_API_VALIDATION")
      ? (error.details.fields as Record<string, string[]>)
      : undefined;
    if (fields === undefined) throw error;
    const [field, [message] = []] = Object.entries(fields)[0]!;
    const flag = FLAG_OF[field] ?? field;
    throw new RpmlabError("E_USAGE", `${flag}: ${message}`, { field: flag });
  }
}
