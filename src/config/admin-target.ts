import { RpmlabError } from "../core/errors.ts";
import { ADMIN_TOKEN_ENV, DEFAULT_HOST, DEFAULT_HTTP_PORT } from "./serve-config.ts";

/** Environment variable naming the base URL of a running `rpmlab serve`. */
export const LAB_URL_ENV = "RPMLAB_URL";
export const DEFAULT_LAB_URL = `http://${DEFAULT_HOST}:${DEFAULT_HTTP_PORT}`;

/** Where a CLI command finds the lab admin API of a running `rpmlab serve`. */
export interface AdminTarget {
  /** Scheme, host and port (and path prefix, if any), without a trailing slash. */
  readonly baseUrl: string;
  readonly token: string;
  /** Where the token came from, for the error a refused one gets: "--admin-token" unless told. */
  readonly tokenSource?: string;
}

/**
 * `--url` (else $RPMLAB_URL, else serve's default address) and `--admin-token` (else
 * $RPMLAB_ADMIN_TOKEN): commands that act on a running lab go through its admin API, because
 * the running serve owns the fulfilment timers.
 */
export function adminTarget(
  flags: { url?: string | undefined; adminToken?: string | undefined },
  env: Readonly<Record<string, string | undefined>> = process.env,
): AdminTarget {
  // An empty variable is unset, but an empty flag (a blank $VAR on the command line) is a
  // mistake, refused as serve refuses an empty --host or --admin-token: falling back would act
  // on another lab, or with another lab's token, than the one the user named.
  for (const [flag, value] of [
    ["--url", flags.url],
    ["--admin-token", flags.adminToken],
  ] as const) {
    if (value === "") {
      throw new RpmlabError(
        "E_CONFIG_INVALID",
        `${flag} was given empty: name a value or leave it out`,
        {
          field: flag.slice(2),
          source: flag,
        },
      );
    }
  }
  const raw = flags.url || env[LAB_URL_ENV] || DEFAULT_LAB_URL;
  // Named as the user gave it: a CI job's environment is not something its command line shows.
  const urlSource = flags.url ? "--url" : env[LAB_URL_ENV] ? `$${LAB_URL_ENV}` : "--url";
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    url = new URL("invalid:");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new RpmlabError(
      "E_CONFIG_INVALID",
      `${urlSource} must be the http(s) base URL rpmlab serve printed, e.g. ${DEFAULT_LAB_URL}; got "${raw}"`,
      { field: "url", source: urlSource },
    );
  }
  const token = flags.adminToken || env[ADMIN_TOKEN_ENV];
  if (token === undefined || token === "") {
    throw new RpmlabError(
      "E_USAGE",
      `this command acts through a running rpmlab serve: give its admin token (--admin-token, or $${ADMIN_TOKEN_ENV}); serve prints it at start`,
      { field: "admin-token" },
    );
  }
  const tokenSource = flags.adminToken ? "--admin-token" : `$${ADMIN_TOKEN_ENV}`;
  return { baseUrl: url.toString().replace(/\/+$/, ""), token, tokenSource };
}
