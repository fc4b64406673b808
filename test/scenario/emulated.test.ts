/**
 * Issue 7 §1–2: scenarios on emulated BLE. The fixture's three households each run a noble
 * gateway and bleno devices on one emulated radio on the run's virtual clock; a cuff out of range
 * stores and uploads when back, a bariatric scale (which cannot store) out of range loses its
 * readings by design, interference around a household only delays it. `rpmlab run --btsnoop`
 * writes every controller's HCI traffic; a scenario without HCI refuses the flag.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadScenario } from "../../src/scenario/load.ts";
import { runScenario } from "../../src/scenario/runner.ts";
import { runCli } from "../catalogue/cli-io.ts";
import { postgresHarness } from "../support/postgres.ts";

const EMULATED = fileURLToPath(new URL("../fixtures/scenarios/emulated.yaml", import.meta.url));
const SMOKE = fileURLToPath(new URL("../../scenarios/smoke.yaml", import.meta.url));
const GATEWAY_REPLACEMENT = fileURLToPath(
  new URL("../../scenarios/gateway-replacement.yaml", import.meta.url),
);

describe("a scenario on emulated BLE", () => {
  it("passes its expectations: every reading taken is stored, but those lost by design", async () => {
    const scenario = loadScenario(EMULATED);
    const first = await runScenario(scenario);
    const { readings } = first.counts;
    expect(first.expectations.filter((e) => !e.passed)).toEqual([]);
    expect(first.passed).toBe(true);
    // Three households, two devices each, two readings a day for two days.
    expect(readings.taken).toBe(24);
    expect(readings.missing).toBe(0);
    // The bariatric scale's two readings of its day away; the cuff's morning away only waits.
    expect(readings.lost_by_design).toBe(2);
    expect(readings.stored).toBe(readings.taken - readings.lost_by_design);

    const second = await runScenario(scenario);
    expect(second.digest).toBe(first.digest);
    expect(second.counts).toEqual(first.counts);
  }, 60_000);

  it("replaces and unlinks gateways: the devices move to the replacement and upload what they kept", async () => {
    const shipped = loadScenario(GATEWAY_REPLACEMENT);
    const report = await runScenario({
      ...shipped,
      transports: { ...shipped.transports, ble: "emulated" },
    });
    expect(report.expectations.filter((e) => !e.passed)).toEqual([]);
    const { readings } = report.counts;
    expect(readings.missing).toBe(0);
    expect(readings.stored).toBe(readings.taken - readings.lost_by_design);
  }, 60_000);

  it("refuses a real radio in a scenario, saying why and what to use", async () => {
    const scenario = {
      ...loadScenario(EMULATED),
      transports: { ble: "hci:0", broker: "embedded", store: "memory" },
    };
    await expect(runScenario(scenario as never)).rejects.toThrow(
      /transports\.ble hci:0: a scenario runs on a virtual clock, which cannot drive a real radio.*rpmlab gateway --ble hci:0/,
    );
  });
});

const pgh = await postgresHarness("a scenario on emulated BLE, on PostgreSQL");
if (pgh !== undefined) {
  describe("a scenario on emulated BLE, on PostgreSQL", () => {
    afterAll(() => pgh.close());

    it("stores what it does on memory: BLE timing between milliseconds fits bigint epoch ms", async () => {
      const scenario = loadScenario(EMULATED);
      const { spec } = pgh.nextSpec();
      // Held for the whole run: the lab migrates its schema as it starts (support/postgres.ts).
      const report = await pgh.locked(() =>
        runScenario({ ...scenario, transports: { ...scenario.transports, store: spec } }),
      );
      const memory = await runScenario(scenario);
      expect(report.passed).toBe(true);
      expect(report.digest).toBe(memory.digest);
    }, 60_000);
  });
}

describe("rpmlab run --btsnoop", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "rpmlab-run-btsnoop-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("writes the HCI capture of every controller of the run", async () => {
    const file = join(dir, "run.btsnoop");
    const run = await runCli("run", EMULATED, "--btsnoop", file, "--no-progress");
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const capture = readFileSync(file);
    // btsnoop header, BlueZ monitor datalink (src/ble/btsnoop.ts).
    expect(capture.subarray(0, 8).toString("latin1")).toBe("btsnoop\0");
    expect([capture.readUInt32BE(8), capture.readUInt32BE(12)]).toEqual([1, 2001]);
    const ops = new Map<number, number>();
    const names: string[] = [];
    const start = Date.UTC(2026, 0, 5);
    let last = 0n;
    for (let at = 16; at < capture.length; ) {
      const length = capture.readUInt32BE(at + 4);
      const op = capture.readUInt32BE(at + 8) & 0xffff;
      ops.set(op, (ops.get(op) ?? 0) + 1);
      if (op === 0) names.push(capture.subarray(at + 24 + 8, at + 24 + 16).toString("latin1"));
      const stamp = capture.readBigInt64BE(at + 16);
      expect(stamp).toBeGreaterThanOrEqual(last);
      last = stamp;
      at += 24 + length;
    }
    // One New Index per controller: three gateways and six devices.
    expect(ops.get(0)).toBe(9);
    // Named in 8 octets: "gateway:" and "device:C…" (device addresses are C0…: fulfilment).
    expect(names.filter((n) => n === "gateway:").length).toBe(3);
    expect(names.filter((n) => n.startsWith("device:")).length).toBe(6);
    // Commands, events, ACL both ways: the hosts' traffic, not only the controllers' announcements.
    for (const op of [2, 3, 4, 5]) expect(ops.get(op) ?? 0).toBeGreaterThan(10);
    // Virtual timestamps: the run's days, not the wall clock.
    const us = (ms: number) => BigInt(ms) * 1000n + 0x00dcddb30f2f8000n;
    expect(last).toBeGreaterThan(us(start + 86_400_000));
    expect(last).toBeLessThan(us(start + 4 * 86_400_000));
  }, 60_000);

  it("exits 2 on a scenario without emulated BLE, naming --btsnoop, before running anything", async () => {
    const file = join(dir, "none.btsnoop");
    const { code, stdout, stderr } = await runCli("run", SMOKE, "--btsnoop", file);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/^rpmlab: E_USAGE: --btsnoop captures the HCI traffic of emulated BLE/);
    expect(stderr).toContain("transports.ble direct");
  });
});
