import { afterAll } from "vitest";
import { openStore } from "../../src/store/open.ts";
import { POSTGRES_SHOWN, postgresHarness } from "../support/postgres.ts";
import { fulfilmentSuite } from "./suite.ts";

/** The device services on PostgreSQL, one fresh schema per test as the store contract does. */
const pgh = await postgresHarness("device services on PostgreSQL");

if (pgh !== undefined) {
  let schema = "";
  afterAll(() => pgh.close());
  fulfilmentSuite(`PostgreSQL (${POSTGRES_SHOWN})`, {
    open(deps) {
      const next = pgh.nextSpec();
      schema = next.schema;
      return pgh.locked(() => openStore(next.spec, deps));
    },
    cleanup: () => pgh.dropSchema(schema),
  });
}
