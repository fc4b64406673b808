import type { Command } from "commander";
import { type BillingJson, renderBilling } from "../app/order-views.ts";
import type { CliIo } from "./io.ts";
import { type LabFlags, labClient, labOptions } from "./orders.ts";

/** `rpmlab billing`: device-days per account over a period, from a running serve's admin API. */
export function registerBillingCommand(program: Command, io: CliIo): void {
  labOptions(
    program
      .command("billing")
      .description(
        "What the vendor would bill: device-days per account over a period (default this month), and the hardware shipped",
      )
      .option("--account <client-domain>", "one account")
      .option("--month <YYYY-MM>", "a calendar month")
      .option("--from <YYYY-MM-DD>", "first day (UTC)")
      .option("--to <YYYY-MM-DD>", "last day, inclusive"),
  ).action(
    async (flags: LabFlags & { account?: string; month?: string; from?: string; to?: string }) => {
      const report = await labClient(flags).get<BillingJson>("billing/", {
        account: flags.account,
        month: flags.month,
        from: flags.from,
        to: flags.to,
      });
      io.out(renderBilling(report, flags.json === true));
    },
  );
}
