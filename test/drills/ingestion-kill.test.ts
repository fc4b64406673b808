/**
 * Issue 6 §5, fault drill: the ingestion core is killed (SIGKILL) and restarted. `rpmlab serve`
 * runs as a child process (SQLite file store, embedded broker on a port of its own); a fleet of
 * direct-cellular devices of every type publishes into it from this process on a virtual Clock.
 * Serve is killed with -9 mid-traffic — ingestion, broker and all, nothing shuts down — the
 * devices queue in their outboxes while it is gone, and a new serve on the same store and port
 * takes over. Every reading is stored exactly once: a PUBACK comes only after the commit, so
 * whatever the kill cut off is sent again, and what was committed is not stored twice.
 *
 * The fleet has no gateway here: serve runs on the system clock and the fleet on a virtual
 * one, and a gateway sets its devices' clocks from the service's time. Gateways go through the
 * same ingestion core; the in-process drills cover their side of every fault.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SystemClock } from "../../src/core/clock.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { type Served, startServe } from "../e2e/serve-process.ts";
import { LabApi } from "../support/lab-api.ts";
import { DrillFleet, HOUR, MIN, printCounts } from "./drill-fleet.ts";
import { freePort } from "./own-mosquitto.ts";

describe("fault drill: the ingestion core is killed with -9 and restarted", () => {
  let served: Served | undefined;
  let fleet: DrillFleet | undefined;
  let dir: string | undefined;

  afterEach(async () => {
    await fleet?.stop();
    await served?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it("stores every reading exactly once", async () => {
    dir = mkdtempSync(join(tmpdir(), "rpmlab-kill-drill-"));
    const [brokerPort, httpPort] = [await freePort(), await freePort()];
    const serve = () =>
      startServe([
        "--store",
        `sqlite:${join(dir!, "lab.db")}`,
        "--broker",
        `embedded:${brokerPort}`,
        "--port",
        String(httpPort),
        "--admin-token",
        "kill-drill-admin-token",
      ]);
    served = await serve();
    // The lab's clock is the system's: readings start a minute after their devices' activation.
    const clock = new VirtualClock({ startMs: new SystemClock().now() });
    fleet = await DrillFleet.launch({
      clock,
      api: new LabApi(served.info),
      brokerUrl: served.info.mqtt_url,
      seed: "drill-kill",
      days: 2,
      cellularBatch: 1,
    });
    await fleet.powerOn();
    await fleet.pump(fleet.start + HOUR);
    // A day off the network, less the first hour, builds a backlog whatever the time of day the
    // drill starts at (the fleet's clock is the system's, and its patients read at set local
    // times); the kill comes as the first of it is acked, with the rest in flight or on its way.
    for (const device of fleet.cellular) device.modem.link.outage(23 * HOUR);
    await fleet.pump(fleet.start + 24 * HOUR - MIN);
    const backlog = fleet.cellular.reduce((n, d) => n + d.stats.queued, 0);
    expect(backlog).toBeGreaterThan(5);
    const running = served;
    const killed = new Promise<void>((resolve) => {
      const offs = fleet!.cellular.map((d) =>
        d.events.on("sent", () => {
          for (const off of offs) off();
          resolve(running.kill());
        }),
      );
    });
    await fleet.pump(fleet.start + 24 * HOUR + MIN, MIN);
    await killed;
    // While serve is gone the devices are cut off: what is left waits in their outboxes.
    await fleet.pump(fleet.start + 28 * HOUR, 30 * MIN);
    const waiting = fleet.cellular.reduce((n, d) => n + d.stats.queued, 0);
    expect(waiting).toBeGreaterThan(0);
    served = await serve();
    const counts = await fleet.finish();
    printCounts("ingestion killed with -9 and restarted", counts);
    expect(counts.taken).toBeGreaterThan(20);
    expect(counts.mismatches).toEqual([]);
    expect(counts.missing).toBe(0);
    expect(counts.duplicates).toBe(0);
    expect(counts.unexpected).toBe(0);
    // The pulse oximeters do not store offline; nothing was out of reach of the network.
    expect(counts.lostByDesign).toBe(fleet.lostByDesignOnDevices());
  }, 180_000);
});
