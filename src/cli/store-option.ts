import { STORE_ENV } from "../config/lab-store.ts";
import { DEFAULT_SERVE_STORE } from "../config/store-spec.ts";

/** Help of the --store option every store command takes. */
export const STORE_OPTION_HELP = `store to use: sqlite:PATH or postgres://… (default $${STORE_ENV}, else ${DEFAULT_SERVE_STORE}; not memory, which only its own process reaches)`;
