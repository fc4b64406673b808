import { existsSync } from "node:fs";
import { resolveStoreSpec, storeSource } from "../config/lab-store.ts";
import { parseStoreSpec } from "../config/store-spec.ts";
import { type Clock, SystemClock } from "../core/clock.ts";
import { RpmlabError } from "../core/errors.ts";
import { Rng } from "../core/rng.ts";
import { openStore } from "../store/open.ts";
import type { Store } from "../store/store.ts";

/**
 * Opens the lab's store for one CLI command and closes it after (the CLI works on the store
 * directly, so it works whether or not `rpmlab serve` is running on the same file).
 * Ids come from a fixed seed: the store forks it per opening ("epoch"), so each command draws
 * fresh ids (src/store/context.ts).
 */
export async function withLabStore<T>(
  spec: string | undefined,
  fn: (store: Store, clock: Clock) => Promise<T>,
  options: { readonly create?: boolean } = {},
): Promise<T> {
  const resolved = resolveStoreSpec(spec);
  const source = storeSource(spec);
  const parsed = parseStoreSpec(resolved, source);
  if (parsed.kind === "sqlite" && parsed.memory) {
    // A memory store lives in the one process that opened it: this command would open an empty
    // one of its own and answer from it ("no dead letters", an account nobody else sees).
    throw new RpmlabError(
      "E_USAGE",
      `${source} ${resolved.trim()} is a store inside one process (rpmlab serve --store memory keeps its own): a command cannot reach it. Use that serve's lab admin API (/lab/v1/), or give both a sqlite:PATH or postgres:// store`,
      { field: "store" },
    );
  }
  if (parsed.kind === "sqlite" && options.create !== true && !existsSync(parsed.path)) {
    // Opening would make an empty database (folders and all) and answer from it: a mistyped
    // path would list nothing and look fine.
    throw new RpmlabError(
      "E_STORE_NOT_FOUND",
      `no store at ${parsed.path} (${source} ${resolved.trim()}): \`rpmlab accounts create\` or \`rpmlab serve\` makes one there`,
      { field: "store", value: resolved.trim() },
    );
  }
  const clock = new SystemClock();
  const store = await openStore(resolved, { clock, rng: new Rng("rpmlab-cli") });
  try {
    return await fn(store, clock);
  } finally {
    await store.close();
    clock.dispose();
  }
}
