import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { type NativeSocket, PinnedSocket } from "../../src/ble/socket/native.ts";

/** The native addon's side as the host sees it: `data` emitted from the addon's own callback. */
class FakeNative extends EventEmitter {
  bindRaw = () => 0;
  bindUser = () => 0;
  bindControl = () => {};
  isDevUp = () => true;
  setFilter = () => {};
  start = () => {};
  stop = () => {};
  write = (_data: Buffer): void => {};
  getDeviceList = () => [];
}

describe("PinnedSocket (hci:N)", () => {
  it("a host that throws on a packet loses that packet, not the process; the next one arrives", () => {
    const native = new FakeNative();
    const socket = new PinnedSocket(native as unknown as NativeSocket, 0);
    const errors: unknown[] = [];
    socket.onHostError = (error) => errors.push(error);
    const seen: string[] = [];
    socket.on("data", (d: Buffer) => {
      // bleno reading an MTU out of a one-octet Exchange MTU Request.
      if (d.length < 3) d.readUInt16LE(1);
      seen.push(d.toString("hex"));
    });
    expect(() => native.emit("data", Buffer.from("02", "hex"))).not.toThrow();
    native.emit("data", Buffer.from("021700", "hex"));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(RangeError);
    expect(seen).toEqual(["021700"]);
  });

  it("sends bleno's management commands to its own adapter: Load Long Term Keys on hci:1 goes to index 1", () => {
    const native = new FakeNative();
    const written: Buffer[] = [];
    native.write = (data: Buffer) => {
      written.push(data);
    };
    const socket = new PinnedSocket(native as unknown as NativeSocket, 1);
    socket.bindControl();
    // bleno's mgmt.js writes index 0 whatever adapter it runs on: on hci:1 its STK went to hci0
    // and hci1's kernel refused the LE Long Term Key Request, so no virtual device paired.
    // Load Long Term Keys (0x0013), index 0, no key.
    socket.write(Buffer.from("1300000002000000", "hex"));
    // Read Management Version Information (0x0001) is for no adapter (index 0xFFFF): as written.
    socket.write(Buffer.from("0100ffff0000", "hex"));
    expect(written.map((w) => w.toString("hex"))).toEqual(["1300010002000000", "0100ffff0000"]);
  });
});
