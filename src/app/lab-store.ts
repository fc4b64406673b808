import { resolveStoreSpec } from "../config/lab-store.ts";
import { type Clock, SystemClock } from "../core/clock.ts";
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
): Promise<T> {
  const clock = new SystemClock();
  const store = await openStore(resolveStoreSpec(spec), { clock, rng: new Rng("rpmlab-cli") });
  try {
    return await fn(store, clock);
  } finally {
    await store.close();
    clock.dispose();
  }
}
