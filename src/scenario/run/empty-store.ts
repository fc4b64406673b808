import type { LabDeps } from "../../app/lab.ts";
import { redactStoreSpec } from "../../config/store-spec.ts";
import { RpmlabError } from "../../core/errors.ts";
import { openStore } from "../../store/open.ts";

type Opener = NonNullable<LabDeps["openStore"]>;

/**
 * A scenario runs on an empty store: its seed names every id from the store's first opening,
 * its enrolment creates patients the store must not hold yet, and its expectations count from
 * zero. A `sqlite:PATH` or `postgres://…` store that already holds a lab (an earlier run, even
 * one killed halfway) is refused before anything runs, with what to do, rather than failing at
 * the first patient with a duplicate external id. Nothing in it is changed or deleted. The
 * scenario cannot run as written (E_SCENARIO_INVALID, rpmlab run's exit 2): a retry fails alike.
 */
export function emptyStoreOnly(open: Opener = openStore): Opener {
  return async (spec, options) => {
    const store = await open(spec, options);
    const accounts = await store.accounts.list().catch(async (error: unknown) => {
      await store.close();
      throw error;
    });
    if (accounts.length > 0) {
      await store.close();
      const where = redactStoreSpec(spec);
      const names = accounts.slice(0, 3).map((a) => a.clientDomain);
      if (accounts.length > 3) names.push("…");
      throw new RpmlabError(
        "E_SCENARIO_INVALID",
        `the store ${where} already holds a lab (accounts ${names.join(", ")}): a scenario starts from an empty store. Delete it (for sqlite:PATH, the file and its -wal and -shm files), empty the PostgreSQL database, or name another store in transports.store`,
        { field: "transports.store" },
      );
    }
    return store;
  };
}
