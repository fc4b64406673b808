/**
 * The gateway's GATT client (noble, unmodified, behind the lab's checks) against a peripheral
 * whose GATT server is written in raw ATT (support/att-peripheral.ts): writes and subscriptions.
 */
import { describe, expect, it } from "vitest";
import type { CentralLink } from "../../src/ble/hosts/central.ts";
import type { VirtualClock } from "../../src/core/virtual-clock.ts";
import { closedAfterEach, gattServer, pattern, settled } from "./support/att-peripheral.ts";

const connected = closedAfterEach();

/** The outcome of subscribing to the test characteristic FFF1, values ignored. */
const subscribeFff1 = (clock: VirtualClock, link: CentralLink) =>
  settled(
    clock,
    link.subscribe("FFF1", () => undefined),
  );

describe("the gateway's GATT client when a peripheral refuses a write", () => {
  it("fails a write answered Write Not Permitted (0x03) at once, naming the error, and writes on", async () => {
    const server = gattServer(256, pattern(20, 3));
    const { clock, link } = await connected(server);

    server.state.writeError = 0x03;
    // noble completed a write on its Write Response only: the caller waited for ever.
    const refused = await settled(clock, link.write("FFF1", pattern(10, 1)));
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(
      /write FFF1: ATT error 0x03 \(Write Not Permitted\)/,
    );
    // The code, for the session to tell a refusal from a lost link (ble-session.ts).
    expect(refused).toMatchObject({ code: "E_BLE_GATT", details: { attError: 0x03 } });

    expect(await settled(clock, link.write("FFF1", pattern(10, 2)))).toBeUndefined();
    expect(server.state.value).toEqual(pattern(10, 2));
  }, 30_000);

  it("stops a long write at its first refused Prepare Write, cancels what was queued, and names the error", async () => {
    const server = gattServer(256, pattern(20, 3));
    const { clock, link } = await connected(server);
    const opcodesBefore = server.state.opcodes.length;

    // 600 octets at ATT_MTU 256: parts of 251 at offsets 0, 251, 502; the second is refused.
    server.state.prepareError = { offset: 251, code: 0x09 };
    const refused = await settled(clock, link.write("FFF1", pattern(600, 4)));
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/write FFF1: ATT error 0x09 \(Prepare Queue Full\)/);
    // No part after the refused one (Vol 3 Part F §3.4.6.1), and the queue cancelled (0x00).
    expect(server.state.opcodes.slice(opcodesBefore)).toEqual([0x16, 0x16, 0x18]);
    expect(server.state.executeFlags).toEqual([0x00]);
    expect(server.state.value).toEqual(pattern(20, 3));

    server.state.prepareError = undefined;
    expect(await settled(clock, link.write("FFF1", pattern(600, 5)))).toBeUndefined();
    expect(server.state.value).toEqual(pattern(600, 5));
  }, 30_000);

  it("fails a long write whose Execute Write is answered Invalid Offset (0x07)", async () => {
    const server = gattServer(256, pattern(20, 3));
    const { clock, link } = await connected(server);

    server.state.executeError = 0x07;
    const refused = await settled(clock, link.write("FFF1", pattern(300, 6)));
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/write FFF1: ATT error 0x07 \(Invalid Offset\)/);
  }, 30_000);
});

describe("the gateway's GATT client when a peripheral refuses a subscription", () => {
  it("fails a subscribe whose CCCD write is refused, naming the error, and subscribes on", async () => {
    const server = gattServer(256, pattern(20, 3));
    const { clock, link } = await connected(server);

    server.state.cccdError = 0xfd;
    const refused = await subscribeFff1(clock, link);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/subscribe FFF1: ATT error 0xfd/);
    expect(server.state.cccd).toBe(0);

    server.state.cccdError = undefined;
    expect(await subscribeFff1(clock, link)).toBeUndefined();
    expect(server.state.cccd).toBe(0x0001);
  }, 30_000);

  it("fails a subscribe to a characteristic without a CCCD, naming the missing descriptor", async () => {
    const server = gattServer(256, pattern(20, 3));
    const { clock, link } = await connected(server);

    server.state.hasCccd = false;
    const refused = await subscribeFff1(clock, link);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(
      /subscribe FFF1: no Client Characteristic Configuration descriptor \(ATT error 0x0a \(Attribute Not Found\)\)/,
    );
  }, 30_000);

  it("refuses to subscribe to a characteristic that neither notifies nor indicates, as the direct path does", async () => {
    // Read and Write only: noble wrote 0x0000 to the CCCD and called it subscribed.
    const server = gattServer(256, pattern(20, 3), { properties: 0x0a });
    const { clock, link } = await connected(server);
    const opcodesBefore = server.state.opcodes.length;
    const refused = await subscribeFff1(clock, link);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/FFF1 cannot notify or indicate$/);
    expect(server.state.opcodes.length).toBe(opcodesBefore);
  }, 30_000);

  it("subscribes when the CCCD is listed without its value, where noble threw reading past the response", async () => {
    const server = gattServer(256, pattern(20, 3));
    const { clock, link } = await connected(server);
    server.state.cccdWithoutValue = true;
    expect(await subscribeFff1(clock, link)).toBeUndefined();
    expect(server.state.cccd).toBe(0x0001);
  }, 30_000);

  it("fails a subscribe whose CCCD is found outside the characteristic, and writes nothing there", async () => {
    const server = gattServer(256, pattern(20, 3));
    const { clock, link } = await connected(server);
    // FFF1 spans handles 0x0002–0x0004; a peripheral that ignores the range answers another
    // characteristic's CCCD (Vol 3 Part F §3.4.4.1), which noble wrote: that one was enabled,
    // and the session waited for FFF1's values.
    server.state.cccdHandle = 0x0009;
    const writesBefore = server.state.opcodes.filter((op) => op === 0x12).length;
    const refused = await subscribeFff1(clock, link);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(
      /subscribe FFF1: CCCD at handle 0x0009 is outside the characteristic's handles 0x0002–0x0004/,
    );
    expect(server.state.opcodes.filter((op) => op === 0x12).length).toBe(writesBefore);
  }, 30_000);
});
