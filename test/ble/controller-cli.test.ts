import { describe, expect, it } from "vitest";
import { ControllerApp } from "../../src/app/ble-controller.ts";
import type { CliIo } from "../../src/cli/io.ts";
import { main } from "../../src/cli/main.ts";
import { parseBleSpec } from "../../src/config/ble-spec.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { ServeLab } from "../gateway/serve-lab.ts";

/** Runs `rpmlab controller --listen <listen>` in process; stops it (SIGTERM) once it is listening. */
async function controllerSays(listen: string): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    out: (t) => {
      out.push(t);
      if (t.includes("listening on")) process.emit("SIGTERM");
    },
    err: (t) => err.push(t),
  };
  const code = await main(["node", "rpmlab", "controller", "--listen", listen], io);
  return { code, out: out.join(""), err: err.join("") };
}

/**
 * Runs `rpmlab ARGS --ble tcp://…` in process against a controller of its own, and stops the
 * controller once the command prints `ready`.
 */
async function whenControllerGoes(
  args: readonly string[],
  ready: string,
): Promise<{ code: number; err: string }> {
  const controller = await ControllerApp.start({ host: "127.0.0.1", port: 0, seed: "cli" });
  let stopping: Promise<void> | undefined;
  const err: string[] = [];
  const io: CliIo = {
    out: (t) => {
      if (t.includes(ready)) stopping ??= controller.stop();
    },
    err: (t) => err.push(t),
  };
  try {
    const ble = `tcp://127.0.0.1:${controller.port}`;
    const code = await main(["node", "rpmlab", ...args, "--ble", ble], io);
    return { code, err: err.join("") };
  } finally {
    await (stopping ?? controller.stop());
  }
}

describe("rpmlab controller", () => {
  it("prints an IPv6 listener as a spec --ble takes back (tcp://[::1]:port, not tcp://::1:port)", async (ctx) => {
    const run = await controllerSays("tcp://[::1]:0");
    if (/EADDRNOTAVAIL|EAFNOSUPPORT/.test(run.err)) ctx.skip(`no IPv6 loopback here: ${run.err}`);
    expect(run.err).toBe("");
    const spec = /listening on (\S+)/.exec(run.out)?.[1];
    expect(spec).toMatch(/^tcp:\/\/\[::1\]:\d+$/);
    expect(parseBleSpec(spec!)).toMatchObject({ kind: "tcp", host: "::1" });
  });

  it("a device whose controller goes away stops with E_BLE_TRANSPORT, not on in silence", async () => {
    const run = await whenControllerGoes(["device", "Vendor BPM - S"], '"advertising"');
    expect(run.code).not.toBe(0);
    // Closed, or reset when it held unread bytes.
    expect(run.err).toMatch(/^rpmlab: E_BLE_TRANSPORT: HCI over TCP: /);
  });

  it("a gateway (--broker) whose controller goes away stops with E_BLE_TRANSPORT", async () => {
    const serve = await ServeLab.start(new VirtualClock({ startMs: Date.UTC(2026, 2, 2, 8) }));
    try {
      const run = await whenControllerGoes(
        [
          ...["gateway", "--broker", serve.info.mqtt_url, "--url", serve.info.base_url],
          ...["--admin-token", serve.info.admin_token, "--gateway-uuid", "A1B2C3D4E5F6"],
        ],
        '"started"',
      );
      expect(run.code).not.toBe(0);
      expect(run.err).toMatch(/^rpmlab: E_BLE_TRANSPORT: HCI over TCP: /);
    } finally {
      await serve.stop();
    }
  });
});
