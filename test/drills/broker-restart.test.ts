/**
 * Issue 6 §5, fault drill: the broker is restarted five times during traffic. `rpmlab serve`
 * runs in this process on a virtual Clock against a Mosquitto of the drill's own (persistence
 * on, as a production broker has it; the machine's shared broker is never touched); the fleet's
 * gateway and cellular devices publish through it while it goes down and comes back. Every
 * reading is stored exactly once: QoS 1 re-sends and outbox retries repeat message ids, and
 * ingestion stores each reading once.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { ServeLab } from "../gateway/serve-lab.ts";
import { LabApi } from "../support/lab-api.ts";
import { DrillFleet, HOUR, printCounts } from "./drill-fleet.ts";
import { mosquittoInstalled, OwnMosquitto } from "./own-mosquitto.ts";

const T0 = Date.UTC(2026, 6, 7, 6, 0, 0);
const installed = mosquittoInstalled();
if (!installed) {
  const reason = "the broker-restart drill needs the mosquitto binary (Debian package mosquitto)";
  if (process.env.CI) throw new Error(`${reason}; CI must run it`);
  console.warn(`${reason}: skipped`);
}

describe.skipIf(!installed)("fault drill: the broker restarts five times during traffic", () => {
  let broker: OwnMosquitto | undefined;
  let serve: ServeLab | undefined;
  let fleet: DrillFleet | undefined;
  let dir: string | undefined;

  afterEach(async () => {
    await fleet?.stop();
    await serve?.stop();
    await broker?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it("stores every reading exactly once", async () => {
    dir = mkdtempSync(join(tmpdir(), "rpmlab-broker-drill-"));
    broker = await OwnMosquitto.start(dir);
    const clock = new VirtualClock({ startMs: T0 });
    serve = await ServeLab.start(clock, broker.url);
    fleet = await DrillFleet.launch({
      clock,
      api: new LabApi(serve.info),
      brokerUrl: broker.url,
      gatewayUuid: "B0B1B2B3B4B5",
      seed: "drill-broker",
      days: 2,
    });
    await fleet.powerOn();
    let sentBefore = 0;
    for (let k = 1; k <= 5; k++) {
      await fleet.pump(fleet.start + k * 8 * HOUR);
      // Traffic flows between restarts: the gateway has sent more since the last one.
      const sent = fleet.gateway.stats.uplink.readings;
      expect(sent).toBeGreaterThan(sentBefore);
      sentBefore = sent;
      await broker.restart();
      // MQTT.js reconnects on its real-time period; the virtual clock waits for it.
      await fleet.reconnected(15_000);
    }
    const counts = await fleet.finish();
    printCounts(`broker restarted ${broker.restarts} times`, counts);
    expect(broker.restarts).toBe(5);
    expect(counts.taken).toBeGreaterThan(20);
    expect(counts.mismatches).toEqual([]);
    expect(counts.missing).toBe(0);
    expect(counts.duplicates).toBe(0);
    expect(counts.unexpected).toBe(0);
    expect(counts.lostByDesign).toBe(0);
  }, 180_000);
});
