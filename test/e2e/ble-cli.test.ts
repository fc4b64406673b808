/**
 * The BLE commands as a user runs them, three processes over TCP: `rpmlab controller --listen`
 * hosts the radio medium; `rpmlab device` (bleno) and `rpmlab gateway` (noble) attach to it with
 * `--ble tcp://…` (H4 framing); the gateway prints the cuff's Blood Pressure Measurement.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { btsnoopRecords } from "../ble/support/btsnoop-records.ts";
import { within } from "../ble/support/lab.ts";
import { preLeController } from "../ble/support/pre-le-controller.ts";
import { BIN, runToExit } from "./cli-process.ts";

const children: ChildProcess[] = [];

afterEach(async () => {
  await Promise.all(
    children.splice(0).map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await exited;
    }),
  );
});

/** Starts `rpmlab …args` and calls `onLine` for each stdout line. */
function rpmlab(args: string[], onLine: (line: string) => void): { stderr: () => string } {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let err = "";
  let out = "";
  child.stderr!.on("data", (c: Buffer) => {
    err += c.toString();
  });
  child.stdout!.on("data", (c: Buffer) => {
    out += c.toString();
    const lines = out.split("\n");
    out = lines.pop()!;
    for (const line of lines) onLine(line);
  });
  return { stderr: () => err };
}

/** Starts `rpmlab controller` on a free port; resolves to its `--ble tcp://…` spec. */
async function controller(): Promise<string> {
  const port = await within<number>(30_000, "the controller's port", (done) =>
    rpmlab(["controller", "--listen", "tcp://127.0.0.1:0"], (line) => {
      const m = /listening on tcp:\/\/127\.0\.0\.1:(\d+)/.exec(line);
      if (m) done(Number(m[1]));
    }),
  );
  return `tcp://127.0.0.1:${port}`;
}

describe("rpmlab controller, device and gateway over HCI/TCP", () => {
  it("the gateway receives the cuff's reading through a controller in another process", async () => {
    const ble = await controller();
    await within(30_000, "the device to advertise", (done) =>
      rpmlab(["device", "Vendor BPM - S", "--ble", ble, "--every", "1"], (line) => {
        if (line.includes('"advertising"')) done(undefined);
      }),
    );
    const value = await within<{ uuid: string; value: string; sensorCode: string }>(
      40_000,
      "a 2A35 value",
      (done) =>
        rpmlab(["gateway", "--ble", ble, "--sensor-code", "10", "--linger", "3000"], (line) => {
          const v = JSON.parse(line) as { event: string; uuid?: string };
          if (v.event === "value" && v.uuid === "2A35") done(v as never);
        }),
    );
    expect(value.sensorCode).toBe("10");
    expect(value.value).toMatch(/^[0-9a-f]{14,}$/);
    // Room for its own waits (three processes started through tsx, 30 + 30 + 40 s at most): the
    // default 30 s cut it off on a busy CI machine before any of them had failed.
  }, 110_000);

  it("a device given --address is visited by a gateway whose whitelist names that address", async () => {
    const ble = await controller();
    // The address the lab derives from an hwi_device_id ending in …cbff3570da21, given to the
    // device as the gateway's whitelist writes it, and to the gateway with colons.
    const address = "CB:FF:35:70:DA:21";
    const advertising = await within<{ address: string }>(
      30_000,
      "the scale to advertise",
      (done) =>
        rpmlab(
          ["device", "Vendor Scale", "--ble", ble, "--address", "CBFF3570DA21", "--every", "1"],
          (line) => {
            const event = JSON.parse(line) as { event: string; address: string };
            if (event.event === "advertising") done(event);
          },
        ),
    );
    expect(advertising.address).toBe(address.toLowerCase());
    const value = await within<{ uuid: string }>(40_000, "a 2A9D value", (done) =>
      rpmlab(["gateway", "--ble", ble, "--address", address, "--linger", "3000"], (line) => {
        const v = JSON.parse(line) as { event: string; uuid?: string };
        if (v.event === "value" && v.uuid === "2A9D") done(v as never);
      }),
    );
    expect(value.uuid).toBe("2A9D");
  }, 110_000);

  it.each([
    ["device", ["device", "Vendor BPM - S"], '"advertising"'],
    ["controller", ["controller", "--listen", "tcp://127.0.0.1:0"], "listening on"],
  ])("%s stops on SIGINT and exits 0", async (_, args, ready) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
    await within(30_000, `rpmlab ${args[0]} to start`, (done) => {
      let out = "";
      child.stdout!.on("data", (c: Buffer) => {
        out += c.toString();
        if (out.includes(ready)) done(undefined);
      });
    });
    // bleno's hook sweep once removed the lab's own SIGINT handler: Ctrl-C killed the device.
    child.kill("SIGINT");
    expect(await exited).toEqual([0, null]);
  });

  it("hci:N without Bluetooth in the kernel fails with E_BLE_NO_ADAPTER and says why", async () => {
    const child = spawn(process.execPath, [BIN, "device", "Vendor BPM - S", "--ble", "hci:0"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(child);
    let err = "";
    child.stderr!.on("data", (c: Buffer) => {
      err += c.toString();
    });
    const [code] = (await once(child, "exit")) as [number];
    // This machine image and CI have no Bluetooth in the kernel (DESIGN.md).
    expect(code).toBe(1);
    expect(err).toMatch(
      /E_BLE_NO_ADAPTER: hci:0: (this kernel has no Bluetooth \(EAFNOSUPPORT\)|.*native HCI socket)/,
    );
  });

  it.each([
    ["device", ["device", "Vendor BPM - S"], "bleno"],
    ["gateway", ["gateway", "--sensor-code", "10"], "noble"],
  ])(
    "%s on an adapter from before LE fails with E_BLE_HOST, exits, its capture complete",
    async (_, args, host) => {
      const controller = await preLeController();
      const dir = mkdtempSync(join(tmpdir(), "rpmlab-ble-cli-"));
      try {
        const capture = join(dir, "host.btsnoop");
        const ble = `tcp://127.0.0.1:${controller.port}`;
        // The host's 1 s adapter poll once kept the process alive after it printed the error.
        const { code, err } = await runToExit(
          [...args, "--ble", ble, "--btsnoop", capture],
          20_000,
        );
        expect(code).toBe(1);
        expect(err).toContain(`rpmlab: E_BLE_HOST: ${host}: adapter is unsupported`);
        const ops = btsnoopRecords(readFileSync(capture)).map(([op]) => op);
        expect([ops[0], ops.at(-1)]).toEqual([0, 1]); // New Index … Delete Index: closed
      } finally {
        for (const s of controller.accepted) s.destroy();
        await new Promise((resolve) => controller.server.close(resolve));
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it("refuses a BLE spec it does not know, naming the ones it does", async () => {
    const child = spawn(
      process.execPath,
      [BIN, "gateway", "--ble", "usb:1", "--sensor-code", "10"],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    children.push(child);
    let err = "";
    child.stderr!.on("data", (c: Buffer) => {
      err += c.toString();
    });
    const [code] = (await once(child, "exit")) as [number];
    expect(code).toBe(2);
    expect(err).toContain("E_CONFIG_INVALID");
    expect(err).toContain("expected emulated, tcp://host:port or hci:N");
  });
});
