import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { parseScenario } from "../../src/scenario/load.ts";
import { runScenario } from "../../src/scenario/runner.ts";
import { openStore } from "../../src/store/open.ts";
import { POSTGRES_SHOWN, postgresHarness } from "../support/postgres.ts";

const pgh = await postgresHarness("Scenario determinism on PostgreSQL");

/**
 * Kits ordered and gateways replaced, shipped and delivered on the lab's clock, then readings.
 * On PostgreSQL each shipment's transition commits after a network round trip; the clock must
 * wait for it, or the transition (its special-order webhook's updated_on, the box powering on)
 * lands a step later, run by run (issue 7 §2). Compared with SQLite, whose transitions commit
 * in the clock's turn: what shipping sent, and the counts. (Not the whole digest: a replacement
 * gateway's clock, set by the service's time answer, can come out a second apart from run to
 * run on either store, README "The digest".)
 */
const SHIPPING = `
scenario: shipping
seed: 5
clock: { start: 2026-03-09T00:00:00Z }
duration: 5d
accounts:
  - id: clinic
    webhooks: [{ id: main, events: [MEASUREMENT, SPECIAL_ORDER, FULFILLMENT], url: lab }]
cohorts:
  - { id: gw, account: clinic, count: 3, model: hypertensive, kit: [Vendor BPM - Wide Range, Vendor Scale], connectivity: gateway }
  - { id: cell, account: clinic, count: 2, model: type2-diabetic, kit: [Vendor Cellular Glucometer], connectivity: cellular, onboarding: ordered }
fulfilment:
  durations: { processing: 1d, in_transit: 1d..2d }
  probabilities: { stock_shortage: 0, delivery_issue: 0, delivery_issue_signature: 0, carrier_hold: 0 }
events:
  - { at: 1d 14:00, action: gateway.replace, target: "gw[0-1]" }
expect:
  - fulfilment: { status: Delivered, count: ">= 4" }
  - readings: { missing: 0 }
`;

/** The shipping webhooks a run sent, bodies with their keys sorted, in a stable order. */
function shippingBodies(rows: readonly { event: string; body: string }[]): string[] {
  const sorted = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sorted)
      : value !== null && typeof value === "object"
        ? Object.fromEntries(
            Object.keys(value)
              .sort()
              .map((k) => [k, sorted((value as Record<string, unknown>)[k])]),
          )
        : value;
  return rows.map((r) => `${r.event} ${JSON.stringify(sorted(JSON.parse(r.body)))}`).sort();
}

const SHIPPING_EVENTS = "event in ('SPECIAL_ORDER', 'FULFILLMENT') and state = 'delivered'";

if (pgh !== undefined) {
  afterAll(() => pgh.close());

  describe(`scenario runs on PostgreSQL (${POSTGRES_SHOWN})`, () => {
    it("ship as the same run on SQLite does: the same counts and shipping webhooks", async () => {
      const scenario = parseScenario(SHIPPING, "/scenarios/shipping.yaml");
      const dir = mkdtempSync(join(tmpdir(), "rpmlab-pg-determinism-"));
      try {
        const file = join(dir, "lab.db");
        const onSqlite = await runScenario({
          ...scenario,
          transports: { ...scenario.transports, store: `sqlite:${file}` },
        });
        expect(onSqlite.passed).toBe(true);
        const db = new Database(file, { readonly: true });
        const expected = shippingBodies(
          db
            .prepare(`select event, body from webhook_deliveries where ${SHIPPING_EVENTS}`)
            .all() as {
            event: string;
            body: string;
          }[],
        );
        db.close();
        expect(expected.length).toBeGreaterThan(10);
        for (let run = 1; run <= 2; run++) {
          const { spec, schema } = pgh.nextSpec();
          const onPostgres = await runScenario(
            { ...scenario, transports: { ...scenario.transports, store: spec } },
            { openStore: (s, options) => pgh.locked(() => openStore(s, options)) },
          );
          const { rows } = await pgh.admin.query<{ event: string; body: string }>(
            `select event, body::text as body from "${schema}".webhook_deliveries where ${SHIPPING_EVENTS}`,
          );
          await pgh.dropSchema(schema);
          expect(onPostgres.counts, `PostgreSQL run ${run}`).toEqual(onSqlite.counts);
          expect(shippingBodies(rows), `PostgreSQL run ${run}`).toEqual(expected);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 180_000);
  });
}
