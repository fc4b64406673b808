/**
 * `rpmlab gateway --broker … --checkin-every` (README "Cellular gateway"): the period reaches the
 * gateway (checked on a virtual clock against serve's composition), and a period the lab does not
 * offer, or one given without --broker, is refused before anything connects.
 */
import { afterEach, describe, expect, it } from "vitest";
import { AdminClient } from "../../src/app/admin-client.ts";
import { GatewayRun } from "../../src/app/gateway-run.ts";
import type { CliIo } from "../../src/cli/io.ts";
import { main } from "../../src/cli/main.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { ServeLab } from "./serve-lab.ts";

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 2, 2, 8, 0, 0);

async function cli(...args: string[]): Promise<{ code: number; err: string }> {
  let err = "";
  const io: CliIo = {
    out: () => undefined,
    err: (text) => {
      err += text;
    },
  };
  return { code: await main(["node", "rpmlab", ...args], io), err };
}

/** A broker nothing listens on, with credentials: usage errors come before connecting. */
const BROKER_FLAGS = [
  "--broker",
  "mqtt://127.0.0.1:9",
  "--username",
  "A1B2C3D4E5F6",
  "--password",
  "x",
];

describe("rpmlab gateway --checkin-every", () => {
  let serve: ServeLab | undefined;
  const runs: GatewayRun[] = [];

  afterEach(async () => {
    for (const run of runs.splice(0)) await run.stop();
    await serve?.stop();
  }, 30_000);

  it("checks in at the period given, on the gateway's clock", async () => {
    const clock = new VirtualClock({ startMs: T0 });
    serve = await ServeLab.start(clock);
    const start = async (gatewayUuid: string, checkinEveryMs?: number) => {
      const run = await GatewayRun.start({
        broker: serve!.info.mqtt_url,
        ble: { kind: "direct" },
        gatewayUuid,
        credentials: {
          admin: { baseUrl: serve!.info.base_url, token: serve!.info.admin_token },
        },
        seed: gatewayUuid,
        everyMs: 0,
        lingerMs: 0,
        checkinEveryMs,
        onEvent: () => undefined,
        clock,
      });
      runs.push(run);
      return run;
    };
    const every5m = await start("A1B2C3D4E5F6", 5 * MINUTE);
    const byDefault = await start("0A0B0C0D0E0F");
    const times = (run: GatewayRun) => {
      const at: number[] = [];
      run.gateway.events.on("checkin", (e) => at.push(e.at));
      return at;
    };
    const fast = times(every5m);
    const slow = times(byDefault);

    // An hour, a minute at a time, letting each step's MQTT traffic settle.
    for (let minute = 0; minute < 60; minute++) {
      await clock.run({ until: clock.now() + MINUTE });
      for (const run of runs) await run.gateway.modem.session.settled();
    }
    // Past the check-in at connection (within the first seconds), each gap is the period, give
    // or take the second a check-in's publish may take on the link.
    const offPeriod = (all: number[], period: number) => {
      const at = all.filter((t) => t >= T0 + MINUTE);
      return at.slice(1).filter((t, i) => Math.abs(t - at[i]! - period) > 1000);
    };
    expect(fast.filter((t) => t >= T0 + MINUTE).length).toBeGreaterThanOrEqual(11);
    expect(offPeriod(fast, 5 * MINUTE)).toEqual([]);
    expect(slow.filter((t) => t >= T0 + MINUTE).length).toBe(3);
    expect(offPeriod(slow, 15 * MINUTE)).toEqual([]);
  }, 30_000);

  it("prints a reconnection the broker refuses (its password rotated meanwhile)", async () => {
    const clock = new VirtualClock({ startMs: T0 });
    serve = await ServeLab.start(clock);
    const admin = { baseUrl: serve.info.base_url, token: serve.info.admin_token };
    const events: Record<string, unknown>[] = [];
    const run = await GatewayRun.start({
      broker: serve.info.mqtt_url,
      ble: { kind: "direct" },
      gatewayUuid: "B1B2C3D4E5F6",
      credentials: { admin },
      seed: "refused",
      everyMs: 0,
      lingerMs: 0,
      onEvent: (e) => events.push(e),
      clock,
    });
    runs.push(run);
    await new AdminClient(admin).post("mqtt-credentials/", {
      role: "gateway",
      username: "B1B2C3D4E5F6",
    });
    const link = run.gateway.modem.link;
    link.outage();
    link.restore();
    const refused = () => events.find((e) => e.event === "connect_failed");
    const deadline = performance.now() + 10_000;
    while (refused() === undefined && performance.now() < deadline) {
      await run.gateway.modem.session.settled();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(refused()).toMatchObject({ event: "connect_failed", code: "E_BROKER_REFUSED" });
  }, 30_000);

  it("refuses a period outside 1m to 1h, naming the flag, before connecting", async () => {
    for (const period of ["30s", "2h", "soon"]) {
      const { code, err } = await cli("gateway", ...BROKER_FLAGS, "--checkin-every", period);
      expect(code, err).toBe(2);
      expect(err).toContain(`--checkin-every takes a duration from 1m to 1h`);
      expect(err).toContain(`got "${period}"`);
    }
  });

  it("refuses a whitelist entry no device could match, naming the flag, before scanning", async () => {
    const address = await cli("gateway", "--ble", "emulated", "--address", "not-an-address");
    expect(address.code).toBe(2);
    expect(address.err).toContain('--address "not-an-address" is not a Bluetooth address');
    for (const code of ["abc", "999"]) {
      const sensor = await cli("gateway", "--ble", "emulated", "--sensor-code", code);
      expect(sensor.code).toBe(2);
      expect(sensor.err).toContain(`--sensor-code ${code}: no device type has it`);
    }
  });

  it("refuses an --every of 0, or one for a gateway whose devices are not its own, naming it", async () => {
    const zero = await cli("gateway", ...BROKER_FLAGS, "--ble", "direct", "--every", "0");
    expect(zero.code, zero.err).toBe(2);
    expect(zero.err).toContain('--every must be at least 1 second, got "0"');
    for (const args of [
      [...BROKER_FLAGS, "--ble", "emulated", "--every", "5"],
      ["--ble", "emulated", "--sensor-code", "10", "--every", "5"],
    ]) {
      const scanning = await cli("gateway", ...args);
      expect(scanning.code, scanning.err).toBe(2);
      expect(scanning.err).toContain("--every sets how often --ble direct's virtual devices");
    }
  });

  it("refuses --checkin-every without --broker", async () => {
    const { code, err } = await cli("gateway", "--sensor-code", "10", "--checkin-every", "5m");
    expect(code).toBe(2);
    expect(err).toContain("--checkin-every needs --broker");
  });
});
