import { RpmlabError } from "../core/errors.ts";

/** Help and default of the --limit option of the list commands. */
export const LIST_LIMIT_HELP = "at most this many";
export const LIST_LIMIT_DEFAULT = "50";

/** A list command's --limit: a whole number from 1 to 1000, as the admin API's page sizes. */
export function listLimit(text: string): number {
  // Digits only: Number() would also take 1e3, 0x10 and " 5 ".
  const limit = /^\d{1,4}$/.test(text) ? Number(text) : Number.NaN;
  if (!(limit >= 1 && limit <= 1000)) {
    // A bad number is E_CONFIG_INVALID naming the flag, as every number option (README "Commands").
    throw new RpmlabError("E_CONFIG_INVALID", `--limit must be 1 to 1000, got "${text}"`, {
      field: "limit",
    });
  }
  return limit;
}
