/**
 * Issue 6 §5, the fault drills that run against `rpmlab serve` in this process (ServeLab: store,
 * embedded broker, ingestion, downlinks, API) on a virtual Clock: a gateway's cellular link out
 * for 12 hours, devices out of range for a day, a gateway restart with readings in its outbox.
 * In each, every reading a device took is stored exactly once, and the only readings missing
 * are those taken out of reach by profiles that do not store offline — counted as lost by
 * design from the device side and from the API side. Each drill prints its counts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { ServeLab } from "../gateway/serve-lab.ts";
import { LabApi } from "../support/lab-api.ts";
import { DAY, type DrillCounts, DrillFleet, HOUR, printCounts } from "./drill-fleet.ts";

const T0 = Date.UTC(2026, 4, 4, 6, 0, 0);

function expectExactlyOnce(counts: DrillCounts): void {
  expect(counts.taken).toBeGreaterThan(20);
  expect(counts.mismatches).toEqual([]);
  expect(counts.missing).toBe(0);
  expect(counts.duplicates).toBe(0);
  expect(counts.unexpected).toBe(0);
  expect(counts.storedRecords).toBe(counts.expectedRecords);
}

describe("fault drills against rpmlab serve in process", () => {
  let serve: ServeLab | undefined;
  let fleet: DrillFleet | undefined;
  let dir: string | undefined;

  afterEach(async () => {
    await fleet?.stop();
    await serve?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    fleet = serve = dir = undefined;
  }, 30_000);

  async function launch(seed: string, days: number, outboxDir?: string): Promise<DrillFleet> {
    const clock = new VirtualClock({ startMs: T0 });
    serve = await ServeLab.start(clock);
    fleet = await DrillFleet.launch({
      clock,
      api: new LabApi(serve.info),
      brokerUrl: serve.info.mqtt_url,
      gatewayUuid: "D0D1D2D3D4D5",
      seed,
      days,
      ...(outboxDir === undefined ? {} : { outboxDir }),
    });
    await fleet.powerOn();
    return fleet;
  }

  it("a gateway's cellular link is out for 12 virtual hours", async () => {
    const f = await launch("drill-outage", 2);
    await f.pump(f.start + 20 * HOUR);
    f.gateway.modem.link.outage(12 * HOUR);
    await f.pump(f.start + 31 * HOUR);
    // The devices kept talking to the gateway: their readings wait in its outbox.
    expect(f.gateway.stats.outbox.queued).toBeGreaterThan(0);
    expect(f.gateway.stats.link.up).toBe(false);
    const counts = await f.finish();
    printCounts("cellular link out 12 h", counts);
    expectExactlyOnce(counts);
    // Out of network is not out of reach: nothing is lost by design.
    expect(counts.lostByDesign).toBe(0);
    expect(f.lostByDesignOnDevices()).toBe(0);
    expect(f.gateway.stats.outbox.dropped).toBe(0);
  }, 120_000);

  it("devices are out of range for a virtual day", async () => {
    const f = await launch("drill-range", 3);
    await f.pump(f.start + 12 * HOUR);
    for (const device of f.direct) device.setInRange(false);
    // A direct-cellular device out of range is out of coverage.
    for (const device of f.cellular) device.modem.link.coverageHole(DAY);
    await f.pump(f.start + 36 * HOUR);
    for (const device of f.direct) device.setInRange(true);
    const counts = await f.finish();
    printCounts("devices out of range 24 h", counts);
    expectExactlyOnce(counts);
    // Storing profiles kept theirs; the others lost what they took out of reach, and both
    // sides count the same readings lost.
    expect(counts.storedOffline).toBeGreaterThan(0);
    expect(counts.lostByDesign).toBeGreaterThan(0);
    expect(counts.lostByDesign).toBe(f.lostByDesignOnDevices());
    for (const device of f.direct.filter((d) => d.ble.profile.stores_offline)) {
      expect(device.ble.counts.lost, device.ble.profile.name).toBe(0);
    }
  }, 120_000);

  it("the gateway restarts with readings in its outbox", async () => {
    dir = mkdtempSync(join(tmpdir(), "rpmlab-drill-"));
    const f = await launch("drill-restart", 2, dir);
    await f.pump(f.start + 10 * HOUR);
    f.gateway.modem.link.outage(8 * HOUR);
    await f.pump(f.start + 14 * HOUR);
    const waiting = f.gateway.stats.outbox.queued;
    expect(waiting).toBeGreaterThan(0);
    await f.gateway.stop();
    const reopened = await f.openGateway();
    // The outbox on disk holds what the gateway had not sent, as it was.
    expect(reopened.stats.outbox.queued).toBe(waiting);
    await reopened.start();
    const counts = await f.finish();
    printCounts("gateway restart with outbox", counts);
    expectExactlyOnce(counts);
    expect(counts.lostByDesign).toBe(0);
  }, 120_000);
});
