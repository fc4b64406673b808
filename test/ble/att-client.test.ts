/**
 * The gateway's GATT client (noble, unmodified, behind the lab's checks) against a peripheral
 * whose GATT server is written in raw ATT (support/att-peripheral.ts): ATT_MTU and reads.
 */
import { describe, expect, it } from "vitest";
import { closedAfterEach, gattServer, pattern, settled } from "./support/att-peripheral.ts";

const connected = closedAfterEach();

describe("the gateway's GATT client against a peripheral's own ATT_MTU", () => {
  it("uses the lesser Rx MTU when a peripheral answers 517: reads a 300-octet value whole and writes one within the agreed MTU", async () => {
    const server = gattServer(517, pattern(300, 1));
    const { clock, link } = await connected(server);
    // noble asks with its Client Rx MTU, 256: both sides use 256 (Vol 3 Part F §3.4.2.2).
    expect(server.state.mtu).toBe(256);
    expect(link.mtu).toBe(256);

    // 255 octets in the Read Response (ATT_MTU−1), the other 45 by Read Blob.
    const reading = link.read("FFF1");
    await clock.run({ until: clock.now() + 2000 });
    expect(await reading).toEqual(pattern(300, 1));

    // Too long for one Write Request at ATT_MTU 256: a long write of Prepare Write Requests.
    const written = pattern(300, 5);
    const writing = link.write("FFF1", written);
    await clock.run({ until: clock.now() + 2000 });
    await writing;
    expect(server.state.value).toEqual(written);
    expect(server.state.longestRequest).toBeLessThanOrEqual(256);
  }, 30_000);
});

describe("the gateway's GATT client against a peripheral's Error Responses", () => {
  it("fails a read answered Invalid PDU (0x04) at once, naming the error, and reads on", async () => {
    const server = gattServer(256, pattern(20, 3));
    const { clock, link } = await connected(server);

    server.state.readError = 0x04;
    let outcome: Buffer | Error | undefined;
    link.read("FFF1").then(
      (value) => (outcome = value),
      (error: Error) => (outcome = error),
    );
    await clock.run({ until: clock.now() + 2000 });
    // noble took every Invalid PDU for its Exchange MTU's and left the read waiting for ever.
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toMatch(/read FFF1: ATT error 0x04 \(Invalid PDU\)/);

    const reading = link.read("FFF1");
    await clock.run({ until: clock.now() + 2000 });
    expect(await reading).toEqual(pattern(20, 3));
  }, 30_000);

  it("keeps ATT_MTU 23 when a peripheral answers Exchange MTU with Invalid PDU (0x04), and goes on", async () => {
    const server = gattServer(256, pattern(40, 4), { exchangeError: 0x04 });
    // noble dropped the answer: its exchange never ended and discovery queued behind it.
    const { clock, link } = await connected(server);
    expect(link.mtu).toBe(23);

    // 22 octets in the Read Response (ATT_MTU−1 at 23), the rest by Read Blob.
    const reading = link.read("FFF1");
    await clock.run({ until: clock.now() + 2000 });
    expect(await reading).toEqual(pattern(40, 4));
  }, 30_000);

  it("fails a read answered Read Not Permitted (0x02), naming the error, where noble gave an empty value", async () => {
    const server = gattServer(256, pattern(20, 3));
    const { clock, link } = await connected(server);

    server.state.readError = 0x02;
    const failing = link.read("FFF1");
    failing.catch(() => undefined);
    await clock.run({ until: clock.now() + 2000 });
    await expect(failing).rejects.toThrow(/read FFF1: ATT error 0x02 \(Read Not Permitted\)/);
  }, 30_000);
});

describe("the gateway's GATT client reading a long value", () => {
  it("fails a read that runs past 512 octets (a Read Blob that ignores its offset) instead of reading on for ever", async () => {
    const server = gattServer(256, pattern(300, 2));
    const { clock, link } = await connected(server);

    // Every Read Blob answered with the value's first 255 octets: noble asked again and again,
    // the value growing without end, until its offset overflowed 16 bits and it threw.
    server.state.blobIgnoresOffset = true;
    const refused = await settled(clock, link.read("FFF1"));
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/read FFF1: value runs past 512 octets/);
    // 255 + 255 + 255 octets: past 512 (Vol 3 Part F §3.2.9) at the second Read Blob.
    expect(server.state.readBlobRequests).toBe(2);

    server.state.blobIgnoresOffset = false;
    expect(await settled(clock, link.read("FFF1"))).toEqual(pattern(300, 2));
  }, 30_000);
});

describe("the gateway's GATT client when the peripheral exchanges MTU", () => {
  it("answers its Server Rx MTU (256) and uses the lesser as ATT_MTU: reads a 300-octet value whole at 185", async () => {
    const server = gattServer(517, pattern(300, 9));
    const { clock, link, send } = await connected(server);
    expect(link.mtu).toBe(256);

    // The peripheral's own Exchange MTU Request, Client Rx MTU 185 (Vol 3 Part F §3.4.2.2).
    send(server.exchangeMtu(185));
    await clock.run({ until: clock.now() + 1000 });
    expect(server.state.clientServerRx).toBe(256);
    expect(server.state.mtu).toBe(185);
    expect(link.mtu).toBe(185);

    // 184 octets in the Read Response (ATT_MTU−1 at 185), the rest by Read Blob.
    const reading = link.read("FFF1");
    await clock.run({ until: clock.now() + 2000 });
    expect(await reading).toEqual(pattern(300, 9));
  }, 30_000);

  it("answers the peripheral's request sent while the gateway's own waits, equal to it (256)", async () => {
    const server = gattServer(256, pattern(20, 2), { ownExchangeFirst: 256 });
    // noble dropped a request equal to its pending one as an echo: the peripheral waited 30 s
    // for the response (Vol 3 Part F §3.3.3) and ended the link.
    const { link } = await connected(server);
    expect(server.state.clientServerRx).toBe(256);
    expect(server.state.mtu).toBe(256);
    expect(link.mtu).toBe(256);
  }, 30_000);
});

describe("the gateway's GATT client when the peripheral indicates", () => {
  it("confirms an indication at once, also while a read awaits its response, and passes its value on", async () => {
    const server = gattServer(256, pattern(20, 11));
    const { clock, link, send, release } = await connected(server);
    const values: Buffer[] = [];
    expect(
      await settled(
        clock,
        link.subscribe("FFF1", (v) => values.push(v)),
      ),
    ).toBeUndefined();
    server.state.holdReads = true;
    const reading = link.read("FFF1");
    await clock.run({ until: clock.now() + 500 });
    // An indication while the read waits: noble queued its Handle Value Confirmation behind the
    // read, and the peripheral, which may send nothing more until confirmed (Vol 3 Part F
    // §3.3.2, §3.4.7.2), waited for a response it had not sent.
    send(Buffer.from([0x1d, 0x03, 0x00, 0x2a]));
    await clock.run({ until: clock.now() + 500 });
    expect(server.state.opcodes.at(-1)).toBe(0x1e);
    expect(values).toEqual([Buffer.from([0x2a])]);
    server.state.holdReads = false;
    release();
    await clock.run({ until: clock.now() + 500 });
    expect(await reading).toEqual(pattern(20, 11));
    expect(server.state.opcodes.filter((op) => op === 0x1e)).toHaveLength(1);
  }, 30_000);
});
