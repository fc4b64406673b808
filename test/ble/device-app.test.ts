/**
 * `rpmlab device`'s DeviceApp when its start fails half-way: whatever it opened before the
 * failure (the btsnoop capture file, the HCI transport's socket) is closed before start rejects,
 * not left to the process's exit.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { type AddressInfo, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DeviceApp } from "../../src/app/ble-device.ts";
import { H4Framer } from "../../src/ble/hci/h4-framer.ts";
import { isRpmlabError } from "../../src/core/errors.ts";
import { within } from "./support/lab.ts";

const READ_LOCAL_VERSION = 0x1001;
/** Bluetooth 2.1: below 4.0 (HCI version 6), so bleno reports the adapter as unsupported. */
const HCI_VERSION_2_1 = 0x04;

/**
 * An H4 controller over TCP from before Bluetooth LE, as an old adapter behind a serial bridge
 * would be: it answers Read Local Version (Vol 4 Part E §7.4.1) and nothing else. Enough for
 * bleno to give up after the device has opened its capture and its transport.
 */
async function preLeController(): Promise<{ server: Server; port: number; accepted: Socket[] }> {
  const accepted: Socket[] = [];
  const server = createServer((socket) => {
    accepted.push(socket);
    const framer = new H4Framer({
      packet: (p) => {
        if (p[0] !== 0x01 || p.readUInt16LE(1) !== READ_LOCAL_VERSION) return;
        // synthetic: Command Complete (0x0e), 1 command allowed, opcode, status 0, then HCI
        // version, revision, LMP version, manufacturer, LMP subversion.
        const v = HCI_VERSION_2_1;
        socket.write(Buffer.from([0x04, 0x0e, 0x0c, 1, 0x01, 0x10, 0, v, 0, 0, v, 0, 0, 0, 0]));
      },
      desync: () => socket.destroy(),
    });
    socket.on("data", (chunk) => framer.push(chunk));
    socket.on("error", () => socket.destroy());
  });
  server.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  return { server, port: (server.address() as AddressInfo).port, accepted };
}

/** [monitor opcode, payload] of each record after the btsnoop header. */
function records(file: Buffer): Array<[number, Buffer]> {
  const out: Array<[number, Buffer]> = [];
  for (let at = 16; at < file.length; ) {
    const length = file.readUInt32BE(at + 4);
    out.push([file.readUInt32BE(at + 8) & 0xffff, file.subarray(at + 24, at + 24 + length)]);
    at += 24 + length;
  }
  return out;
}

/** This process's descriptors open on `path` (Linux /proc; elsewhere none can be seen). */
function openDescriptorsOn(path: string): string[] {
  const fds = "/proc/self/fd";
  if (!existsSync(fds)) return [];
  return readdirSync(fds).filter((fd) => {
    try {
      return readlinkSync(join(fds, fd)) === path;
    } catch {
      return false; // closed between the listing and the look
    }
  });
}

describe("DeviceApp.start that fails after opening its capture and its transport", () => {
  let dir: string;
  let controller: Awaited<ReturnType<typeof preLeController>>;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "rpmlab-device-app-"));
    controller = await preLeController();
    // bleno prints its "does not support BLE" advice with console.log: not this test's output.
    vi.spyOn(console, "log").mockImplementation(() => undefined);
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    for (const s of controller.accepted) s.destroy();
    await new Promise((resolve) => controller.server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it("closes the capture, complete, and hangs up on the controller before rejecting", async () => {
    const capture = join(dir, "device.btsnoop");
    const error = await DeviceApp.start({
      profile: "Vendor BPM - S",
      ble: { kind: "tcp", host: "127.0.0.1", port: controller.port },
      serial: "FAILS0001",
      seed: "device-app",
      everyMs: 0,
      btsnoop: capture,
      onEvent: () => undefined,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isRpmlabError(error, "E_BLE_HOST"), String(error)).toBe(true);
    expect((error as Error).message).toContain("unsupported");

    expect(openDescriptorsOn(capture)).toEqual([]);
    const ops = records(readFileSync(capture)).map(([op, payload]) =>
      op === 2 || op === 3 ? `${op}:${payload.subarray(0, 2).toString("hex")}` : String(op),
    );
    // New Index first; bleno's Read Local Version and its Command Complete; a Delete Index last,
    // which only BtsnoopWriter.close writes.
    expect(ops[0]).toBe("0");
    expect(ops).toContain("2:0110");
    expect(ops).toContain("3:0e0c");
    expect(ops.at(-1)).toBe("1");

    // The device's end of the TCP connection is closed: the controller sees it go.
    const socket = controller.accepted[0]!;
    if (!socket.closed) {
      await within(5_000, "the device to close its HCI connection", (done) => {
        socket.once("close", () => done(undefined));
      });
    }
    expect(socket.closed).toBe(true);
  });
});
