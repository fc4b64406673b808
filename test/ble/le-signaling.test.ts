/**
 * LE signaling that the Linux kernel answers for a raw-mode host (net/bluetooth/l2cap_core.c),
 * answered on the emulated path by the lab's emulated kernel: a peripheral's Connection
 * Parameter Update Request to the gateway's central (Vol 3 Part A §4.20, §4.21).
 */
import { afterEach, describe, expect, it } from "vitest";
import { closedAfterEach, gattServer, pattern } from "./support/att-peripheral.ts";
import { type Closers, connectedCuff } from "./support/raw-att-central.ts";

const connected = closedAfterEach();
const closers: Closers = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A Connection Parameter Update Request: interval min/max (1.25 ms), latency, timeout (10 ms). */
function updateRequest(id: number, min: number, max: number, latency: number, timeout: number) {
  const pdu = Buffer.alloc(12);
  pdu[0] = 0x12;
  pdu[1] = id;
  pdu.writeUInt16LE(8, 2);
  pdu.writeUInt16LE(min, 4);
  pdu.writeUInt16LE(max, 6);
  pdu.writeUInt16LE(latency, 8);
  pdu.writeUInt16LE(timeout, 10);
  return pdu;
}

describe("a peripheral's Connection Parameter Update Request to the gateway", () => {
  it("is accepted and the connection updated when its parameters are valid, rejected when not", async () => {
    const { clock, sendSignaling, signaling, events } = await connected(
      gattServer(256, pattern(20, 1)),
    );
    // 30–50 ms, latency 0, 4 s: noble leaves the request to the kernel in raw mode on Linux,
    // and nothing answered it on the emulated path: the peripheral waited out its RTX timer.
    sendSignaling(updateRequest(7, 24, 40, 0, 400));
    await clock.run({ until: clock.now() + 2000 });
    expect(signaling.map((p) => p.toString("hex"))).toEqual(["1307020000" + "00"]);
    // The central's controller updates the connection: both sides hear of it (interval 40).
    const update = events(0x3e, 0x03).at(-1);
    expect(update?.[4]).toBe(0x00);
    expect(update?.readUInt16LE(7)).toBe(40);

    // Minimum over maximum: rejected (result 0x0001), the connection left as it is.
    signaling.length = 0;
    const before = events(0x3e, 0x03).length;
    sendSignaling(updateRequest(8, 40, 24, 0, 400));
    await clock.run({ until: clock.now() + 2000 });
    expect(signaling.map((p) => p.toString("hex"))).toEqual(["1308020001" + "00"]);
    expect(events(0x3e, 0x03)).toHaveLength(before);
  }, 30_000);
});

describe("a central's Connection Parameter Update Request to a virtual device", () => {
  it("is Command Reject, not understood: only a central takes the request (Vol 3 Part A §4.20)", async () => {
    const { signal } = await connectedCuff(closers);
    // As the kernel answers for a peripheral; bleno took it without a word.
    expect(await signal(updateRequest(9, 24, 40, 0, 400).toString("hex"))).toEqual([
      "01090200" + "0000",
    ]);
  });
});
