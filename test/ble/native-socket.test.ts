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
  write = () => {};
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
});
