/**
 * `rpmlab device`'s DeviceApp when its start fails half-way: whatever it opened before the
 * failure (the btsnoop capture file, the HCI transport's socket) is closed before start rejects,
 * not left to the process's exit.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DeviceApp } from "../../src/app/ble-device.ts";
import { isRpmlabError } from "../../src/core/errors.ts";
import { btsnoopRecords } from "./support/btsnoop-records.ts";
import { within } from "./support/lab.ts";
import { preLeController } from "./support/pre-le-controller.ts";

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
    const ops = btsnoopRecords(readFileSync(capture)).map(([op, payload]) =>
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
