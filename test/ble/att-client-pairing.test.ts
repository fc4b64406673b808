/**
 * The gateway's GATT client (noble, unmodified, behind the lab's checks) pairing with a
 * peripheral whose GATT server is written in raw ATT (support/att-peripheral.ts) and whose SMP
 * answers as a Just Works responder, or refuses (support/just-works-responder.ts).
 */
import { describe, expect, it } from "vitest";
import { closedAfterEach, gattServer, pattern, settled } from "./support/att-peripheral.ts";

const connected = closedAfterEach();

describe("the gateway's GATT client when pairing fails", () => {
  it("fails a read answered Insufficient Authentication once the peripheral refuses pairing, and reads on", async () => {
    const server = gattServer(256, pattern(20, 7));
    const { clock, link } = await connected(server);

    // noble pairs on Insufficient Authentication (Vol 3 Part F §3.4.1.1) and resends the read
    // once encrypted; the peripheral answers Pairing Failed (Vol 3 Part H §3.5.5), on which
    // noble did nothing: the read waited for ever, and every later request behind it.
    server.state.readError = 0x05;
    const refused = await settled(clock, link.read("FFF1"));
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(
      /read FFF1: ATT error 0x05 \(Insufficient Authentication\)/,
    );
    expect(await settled(clock, link.read("FFF1"))).toEqual(pattern(20, 7));
  }, 30_000);
});

describe("the gateway's GATT client pairing with a peripheral of shorter keys", () => {
  it("encrypts with the STK cut to the agreed key size (7 octets), and reads on", async () => {
    const server = gattServer(256, pattern(20, 13));
    const { clock, link, pairing } = await connected(server);
    pairing.mode = "just-works";
    pairing.keySize = 7;
    server.state.readError = 0x05;
    // noble used all 16 octets of the STK where the peripheral keeps 7 (Vol 3 Part H §2.3.4):
    // the keys differed, the first encrypted PDU failed its MIC and the link dropped.
    expect(await settled(clock, link.read("FFF1"))).toEqual(pattern(20, 13));
    expect(pairing.stk!.subarray(7)).toEqual(Buffer.alloc(9));
    expect(link.connected).toBe(true);
  }, 30_000);
});

describe("the gateway's GATT client when the peripheral's Pairing Random does not match", () => {
  it("fails pairing with Pairing Failed (Confirm Value Failed), and the refused read with it", async () => {
    const server = gattServer(256, pattern(20, 12));
    const { clock, link, pairing } = await connected(server);
    pairing.mode = "wrong-random";
    server.state.readError = 0x05;
    const refused = await settled(clock, link.read("FFF1"));
    expect((refused as Error).message).toMatch(/read FFF1: ATT error 0x05/);
    // noble sent 0x04 0x03, a Pairing Random of one octet, which left the peripheral waiting out
    // its SMP timeout; the initiator aborts with Pairing Failed, Confirm Value Failed (Vol 3
    // Part H §2.3.5.5, §3.5.5).
    expect(pairing.received.at(-1)).toEqual(Buffer.from([0x05, 0x04]));
  }, 30_000);
});

describe("the gateway's GATT client when the peripheral asks for security", () => {
  it("pairs on the peripheral's Security Request, and sends a waiting read once only", async () => {
    const server = gattServer(256, pattern(20, 8));
    const { clock, link, sendSmp, release, pairing } = await connected(server);
    pairing.mode = "just-works";

    // A read the peripheral has not answered yet when it asks for security.
    server.state.holdReads = true;
    const reading = link.read("FFF1");
    let value: Buffer | Error | undefined;
    reading.then(
      (v) => (value = v),
      (error: Error) => (value = error),
    );
    await clock.run({ until: clock.now() + 500 });
    expect(server.state.readRequests).toBe(1);

    // Security Request, Bonding (Vol 3 Part H §3.6.7): noble ignored it, and a peripheral that
    // waits for pairing (as BP cuffs that bond do) timed SMP out at 30 s and dropped the link.
    sendSmp(Buffer.from([0x0b, 0x01]));
    await clock.run({ until: clock.now() + 2000 });
    expect(pairing.pairingRequests).toBe(1);
    expect(pairing.stk).toBeDefined();
    // noble sent the read again once encrypted, as after an authentication error: a second
    // transaction on top of the first (Vol 3 Part F §3.3.2), its response taken for another's.
    expect(server.state.readRequests).toBe(1);

    server.state.holdReads = false;
    release();
    await clock.run({ until: clock.now() + 2000 });
    expect(value).toEqual(pattern(20, 8));
    expect(await settled(clock, link.read("FFF1"))).toEqual(pattern(20, 8));
    expect(server.state.readRequests).toBe(2);
  }, 30_000);

  it("waits for the pairing the peripheral asked for when a read is refused for want of it, and pairs once", async () => {
    const server = gattServer(256, pattern(20, 9));
    const { clock, link, send, sendSmp, pairing } = await connected(server);
    pairing.mode = "just-works";
    server.state.holdReads = true;
    let value: Buffer | Error | undefined;
    link.read("FFF1").then(
      (v) => (value = v),
      (error: Error) => (value = error),
    );
    await clock.run({ until: clock.now() + 500 });
    expect(server.state.readRequests).toBe(1);

    // Security Request, then Insufficient Authentication to the read while the pairing it
    // started runs: noble sent a second Pairing Request (one pairing per link at a time, Vol 3
    // Part H §3.4), and the responder started over.
    server.state.holdReads = false;
    server.state.held.splice(0);
    sendSmp(Buffer.from([0x0b, 0x01]));
    send(Buffer.from([0x01, 0x0a, 0x03, 0x00, 0x05]));
    await clock.run({ until: clock.now() + 3000 });
    expect(value).toEqual(pattern(20, 9));
    expect(pairing.pairingRequests).toBe(1);
    // The read was sent again once, when the link was encrypted.
    expect(server.state.readRequests).toBe(2);
  }, 30_000);

  it("pairs on a Security Request that follows a refused pairing (noble ignored it, the peripheral's SMP timing out)", async () => {
    const server = gattServer(256, pattern(20, 10));
    const { clock, link, sendSmp, pairing } = await connected(server);
    // The first Security Request, whose pairing the peripheral refuses (Pairing Not Supported).
    sendSmp(Buffer.from([0x0b, 0x01]));
    await clock.run({ until: clock.now() + 2000 });
    expect(pairing.pairingRequests).toBe(1);
    expect(pairing.stk).toBeUndefined();

    // It asks again, ready now: the central pairs or refuses (Vol 3 Part H §3.6.7); noble
    // ignored every Security Request after its first Pairing Request.
    pairing.mode = "just-works";
    sendSmp(Buffer.from([0x0b, 0x01]));
    await clock.run({ until: clock.now() + 2000 });
    expect(pairing.pairingRequests).toBe(2);
    expect(pairing.stk).toBeDefined();
    expect(await settled(clock, link.read("FFF1"))).toEqual(pattern(20, 10));
  }, 30_000);
});

describe("the gateway's GATT client when the peripheral stalls pairing (SMP timeout)", () => {
  it("fails the refused read naming the SMP timeout 30 s after its Pairing Request, and pairs no more on the link", async () => {
    const server = gattServer(256, pattern(20, 14));
    const { clock, link, sendSmp, pairing } = await connected(server);
    pairing.mode = "silent";
    server.state.readError = 0x05;
    // noble had no Security Manager Timer: a responder that never answered its Pairing Request
    // left the read, and every request behind it, waiting for ever. A procedure not completed
    // within 30 s has failed (Core Vol 3 Part H §3.4), timed on the lab's clock.
    const reading = link.read("FFF1");
    expect(await settled(clock, reading, 29_000)).toBe("pending");
    expect(pairing.pairingRequests).toBe(1);
    const refused = await settled(clock, reading, 2000);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(
      /read FFF1: ATT error 0x05 \(Insufficient Authentication\): SMP timeout: pairing not completed within 30 s/,
    );

    // No further SMP command on that link (§3.4): a later refusal fails at once, naming the
    // timeout, and the peripheral's Security Request starts nothing.
    const sent = pairing.received.length;
    server.state.readError = 0x05;
    const again = await settled(clock, link.read("FFF1"));
    expect((again as Error).message).toMatch(/ATT error 0x05 .*SMP timeout/);
    sendSmp(Buffer.from([0x0b, 0x01]));
    await clock.run({ until: clock.now() + 2000 });
    expect(pairing.received.length).toBe(sent);
    // Reads that need no security go on.
    expect(await settled(clock, link.read("FFF1"))).toEqual(pattern(20, 14));
    expect(link.connected).toBe(true);
  }, 30_000);

  it("restarts the timer at each SMP command it sends: a responder slow at every step but within 30 s pairs", async () => {
    const server = gattServer(256, pattern(20, 15));
    const { clock, link, sendSmp, pairing } = await connected(server);
    pairing.mode = "held";
    server.state.readError = 0x05;
    const reading = link.read("FFF1");
    // Pairing Response, Confirm and Random each 25 s after the command they answer: 75 s in
    // all, but never 30 s since the initiator's last command (§3.4).
    for (let step = 0; step < 3; step++) {
      expect(await settled(clock, reading, 25_000)).toBe("pending");
      expect(pairing.held).toHaveLength(1);
      sendSmp(pairing.held.shift()!);
    }
    expect(await settled(clock, reading)).toEqual(pattern(20, 15));
    expect(pairing.stk).toBeDefined();
    expect(link.connected).toBe(true);
  }, 30_000);

  it("stops the timer when the peripheral refuses pairing: a Security Request 40 s later pairs", async () => {
    const server = gattServer(256, pattern(20, 16));
    const { clock, link, sendSmp, pairing } = await connected(server);
    sendSmp(Buffer.from([0x0b, 0x01]));
    await clock.run({ until: clock.now() + 40_000 });
    expect(pairing.pairingRequests).toBe(1);
    // Pairing Failed ended that procedure (§3.4: the timer stops when it completes); a timer
    // left running would have called the link's SMP timed out and ignored this request.
    pairing.mode = "just-works";
    sendSmp(Buffer.from([0x0b, 0x01]));
    await clock.run({ until: clock.now() + 2000 });
    expect(pairing.pairingRequests).toBe(2);
    expect(pairing.stk).toBeDefined();
    expect(await settled(clock, link.read("FFF1"))).toEqual(pattern(20, 16));
  }, 30_000);

  it("runs the timer through key distribution: keys that stop short fail pairing 30 s on, and a later refusal names it", async () => {
    const server = gattServer(256, pattern(20, 17));
    const { clock, link, sendSmp, pairing } = await connected(server);
    pairing.mode = "just-works";
    pairing.responderKeys = 0x01; // EncKey, as noble asks
    server.state.readError = 0x05;
    expect(await settled(clock, link.read("FFF1"))).toEqual(pattern(20, 17));
    // Encrypted; the responder sends its LTK but never its EDIV and Rand. Pairing is complete
    // only once the keys agreed on are distributed, and the timer runs until then (Vol 3 Part H
    // §3.4, §3.6.1): the gateway stopped it at encryption and called the pairing done.
    sendSmp(Buffer.concat([Buffer.from([0x06]), Buffer.alloc(16, 0x11)]));
    await clock.run({ until: clock.now() + 30_000 });
    // The link stays encrypted and reads on; a refusal for want of security now names why
    // pairing cannot lift it (noble handed it on bare once encrypted).
    server.state.readError = 0x05;
    const refused = await settled(clock, link.read("FFF1"));
    expect((refused as Error).message).toMatch(
      /read FFF1: ATT error 0x05 \(Insufficient Authentication\): SMP timeout/,
    );
    expect(await settled(clock, link.read("FFF1"))).toEqual(pattern(20, 17));
    expect(link.connected).toBe(true);
  }, 30_000);

  it("stops the timer at the last key distributed: no timeout after a pairing that completed", async () => {
    const server = gattServer(256, pattern(20, 18));
    const { clock, link, sendSmp, pairing } = await connected(server);
    pairing.mode = "just-works";
    pairing.responderKeys = 0x01;
    server.state.readError = 0x05;
    expect(await settled(clock, link.read("FFF1"))).toEqual(pattern(20, 18));
    // Encryption Information, then Master Identification (EDIV, Rand): pairing is complete.
    sendSmp(Buffer.concat([Buffer.from([0x06]), Buffer.alloc(16, 0x11)]));
    sendSmp(Buffer.concat([Buffer.from([0x07]), Buffer.alloc(10, 0x22)]));
    await clock.run({ until: clock.now() + 40_000 });
    server.state.readError = 0x05;
    const refused = await settled(clock, link.read("FFF1"));
    expect((refused as Error).message).toMatch(/ATT error 0x05 \(Insufficient Authentication\)$/);
  }, 30_000);
});
