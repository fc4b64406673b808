import { RpmlabError } from "../core/errors.ts";
import { DEFAULT_SERVE_STORE } from "./store-spec.ts";

/** Environment variable naming the store the CLI (and serve) open when `--store` is not given. */
export const STORE_ENV = "RPMLAB_STORE";

/**
 * The store spec a command opens: `--store`, else $RPMLAB_STORE, else the default file
 * (DESIGN.md "Boundaries": `sqlite:./.rpmlab/lab.db`), so `rpmlab accounts …` and a running
 * `rpmlab serve` share one database unless told otherwise.
 */
export function resolveStoreSpec(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  // An empty variable is unset, but an empty --store (a blank $VAR on the command line) is a
  // mistake: falling back would open another database than the one the user meant.
  if (flag === "") {
    throw new RpmlabError(
      "E_CONFIG_INVALID",
      "--store must name a store (memory, sqlite:PATH or postgres://…), got an empty one",
      { field: "store", source: "--store" },
    );
  }
  if (flag !== undefined) return flag;
  const fromEnv = env[STORE_ENV];
  return fromEnv !== undefined && fromEnv !== "" ? fromEnv : DEFAULT_SERVE_STORE;
}

/**
 * Where resolveStoreSpec found the spec, for errors: `--store`, `$RPMLAB_STORE` (a CI job's
 * environment, which no command line shows), or the default file.
 */
export function storeSource(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  if (flag !== undefined && flag !== "") return "--store";
  const fromEnv = env[STORE_ENV];
  return fromEnv !== undefined && fromEnv !== "" ? `$${STORE_ENV}` : "the default store";
}
