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
  if (flag !== undefined && flag !== "") return flag;
  const fromEnv = env[STORE_ENV];
  return fromEnv !== undefined && fromEnv !== "" ? fromEnv : DEFAULT_SERVE_STORE;
}
