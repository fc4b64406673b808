import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadScenario } from "../../src/scenario/load.ts";
import { runScenario } from "../../src/scenario/runner.ts";

const DEMO = fileURLToPath(new URL("../../scenarios/demo.yaml", import.meta.url));
const DAY = 86_400_000;
const HOUR = 3_600_000;

/**
 * `rpmlab demo` promises faults that "show retries and store-and-forward at work": each must
 * catch traffic. Its first three days, at full speed, on a SQLite file read afterwards.
 */
describe("the demo's faults (scenarios/demo.yaml)", () => {
  let dir: string;
  let db: Database.Database;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "rpmlab-demo-faults-"));
    const file = join(dir, "demo.db");
    const demo = loadScenario(DEMO);
    await runScenario({
      ...demo,
      clock: { ...demo.clock, speed: "max" },
      durationMs: 3 * DAY,
      transports: { ...demo.transports, store: `sqlite:${file}` },
    });
    db = new Database(file, { readonly: true });
  }, 120_000);

  afterAll(() => {
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("holds readings of each patient a fault cuts off, and stores them once it ends", () => {
    const late = db
      .prepare(
        `select distinct p.external_id from measurements m
           join devices d on d.id = m.device_id join patients p on p.id = d.patient_id
          where m.created - m.timestamp >= ?`,
      )
      .pluck()
      .all(HOUR) as string[];
    // gateway.outage htn[1], device.out_of_range chf[0], cellular.outage t2d[1].
    expect(late.sort()).toEqual(["chf-0001", "htn-0002", "t2d-0002"]);
  });

  it("has measurement webhooks answered 503 by the clinic's endpoint, retried and delivered", () => {
    const refused = db
      .prepare(
        `select distinct d.id, d.state from webhook_attempts a
           join webhook_deliveries d on d.id = a.delivery_id
          where a.status_code = 503 and d.event = 'MEASUREMENT'`,
      )
      .all() as { id: string; state: string }[];
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.filter((d) => d.state !== "delivered")).toEqual([]);
  });
});
