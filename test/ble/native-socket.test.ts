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

  it("leaves LE signaling answers to the kernel in raw mode (it sends its own Command Reject), makes them on the user channel", () => {
    // An LE Credit Based Connection Request (0x14) from the peer on handle 0x0040, CID 5.
    const request = Buffer.from(
      "0240201200" + "0e000500" + "14010a00" + "80001700170001004000",
      "hex",
    );
    const reject = "024000" + "0a00" + "0600" + "0500" + "010102000000";
    for (const [bind, answers] of [
      ["raw", []],
      ["user", [reject]],
    ] as const) {
      const native = new FakeNative();
      const written: string[] = [];
      native.write = (data: Buffer) => {
        written.push(data.toString("hex"));
      };
      const socket = new PinnedSocket(native as unknown as NativeSocket, 0);
      if (bind === "raw") socket.bindRaw();
      else socket.bindUser();
      native.emit("data", request);
      // Raw mode: Linux's L2CAP answers the peer itself (l2cap_le_sig_channel), so a second
      // Command Reject for the one request went out; on the user channel no kernel answers.
      expect(written, bind).toEqual(answers);
    }
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
