import { connect } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createBroker } from "../../src/mqtt/broker.ts";
import { connectClient } from "../../src/mqtt/client.ts";
import { MAX_PACKET_BYTES, PacketSizeWatch } from "../../src/mqtt/packet-size.ts";
import { within } from "./helpers.ts";

/** A fixed header ([MQTT-2.2]): type octet, then Remaining Length as 1–4 varint octets. */
function header(type: number, remaining: number): Buffer {
  const octets = [type];
  let n = remaining;
  do {
    let octet = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) octet |= 0x80;
    octets.push(octet);
  } while (n > 0);
  return Buffer.from(octets);
}

const packet = (remaining: number) =>
  Buffer.concat([header(0x30, remaining), Buffer.alloc(remaining)]);

function watched(stream: Buffer, cuts: number[], limit: number): (number | null)[] {
  const over: (number | null)[] = [];
  const watch = new PacketSizeWatch(limit, (length) => over.push(length));
  let at = 0;
  for (const cut of cuts.filter((c) => c > 0 && c < stream.length).sort((a, b) => a - b)) {
    watch.push(stream.subarray(at, cut));
    at = cut;
  }
  watch.push(stream.subarray(at));
  return over;
}

/** A raw MQTT 3.1.1 CONNECT (client id "raw", clean session) with `flags` and, if set, a will. */
function rawConnect(flags: number, will?: { topic: string; message: string }): Buffer {
  const str = (v: string) => {
    const b = Buffer.from(v);
    return Buffer.concat([Buffer.from([b.length >> 8, b.length & 0xff]), b]);
  };
  const body = Buffer.concat([
    str("MQTT"),
    Buffer.from([4, flags, 0, 60]),
    str("raw"),
    ...(will === undefined ? [] : [str(will.topic), str(will.message)]),
  ]);
  return Buffer.concat([header(0x10, body.length), body]);
}

/**
 * Writes raw packets and resolves with what came back once the broker closed the connection
 * or `enough` says what came back is all that is awaited.
 */
async function exchange(
  url: string,
  packets: Buffer[],
  enough: (got: Buffer) => boolean = () => false,
): Promise<{ got: Buffer; closed: boolean }> {
  const { port } = new URL(url);
  const socket = connect({ host: "127.0.0.1", port: Number(port) });
  socket.on("error", () => {});
  let got = Buffer.alloc(0);
  const ended = new Promise<boolean>((resolve) => {
    socket.on("data", (c: Buffer) => {
      got = Buffer.concat([got, c]);
      if (enough(got)) resolve(false);
    });
    socket.once("close", () => resolve(true));
  });
  for (const p of packets) socket.write(p);
  const closed = await within(ended, "the broker to answer or close");
  socket.destroy();
  return { got, closed };
}

describe("embedded broker protocol checks", () => {
  it("closes a CONNECT whose will has QoS 3 ([MQTT-3.1.2-14]) without CONNACK", async () => {
    const broker = createBroker("embedded:0");
    await broker.start();
    try {
      // Clean session, will flag, will QoS 3 (bits 3–4).
      const bad = await exchange(broker.url, [
        rawConnect(0x02 | 0x04 | 0x18, { topic: "t/w", message: "x" }),
      ]);
      expect(bad.closed).toBe(true);
      expect(bad.got.length).toBe(0);
    } finally {
      await broker.stop();
    }
  });

  it("closes a QoS 1 PUBLISH with packet identifier 0 ([MQTT-2.3.1-1]) instead of acknowledging it", async () => {
    const broker = createBroker("embedded:0");
    await broker.start();
    try {
      const topic = Buffer.from([0, 3, ...Buffer.from("t/a")]);
      const publish = (id: number) =>
        Buffer.concat([
          header(0x32, topic.length + 2 + 2),
          topic,
          Buffer.from([id >> 8, id & 0xff, 0x7b, 0x7d]),
        ]);
      const zero = await exchange(broker.url, [rawConnect(0x02), publish(0)]);
      expect(zero.closed).toBe(true);
      expect(zero.got.toString("hex")).toBe("20020000"); // CONNACK only, no PUBACK
      // The same PUBLISH with identifier 7 is acknowledged.
      const seven = await exchange(
        broker.url,
        [rawConnect(0x02), publish(7)],
        (g) => g.length >= 8,
      );
      expect(seven).toEqual({ got: Buffer.from("2002000040020007", "hex"), closed: false });
    } finally {
      await broker.stop();
    }
  });
});

describe("MQTT packet size watch", () => {
  it("lets packets up to the limit through whatever the chunking, and reports the first one over it", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 300 }), { minLength: 1, maxLength: 12 }),
        fc.array(fc.nat(4000), { maxLength: 20 }),
        (sizes, cuts) => {
          expect(watched(Buffer.concat(sizes.map(packet)), cuts, 300)).toEqual([]);
          const over = Buffer.concat([...sizes.map(packet), header(0x30, 301), packet(5)]);
          expect(watched(over, cuts, 300)).toEqual([301]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("takes a fifth length octet as malformed ([MQTT-2.2.3]: at most four)", () => {
    expect(watched(Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff, 0x01]), [], 1e9)).toEqual([null]);
  });

  it("the embedded broker closes a connection announcing 250 MiB before CONNECT, and serves others", async () => {
    const broker = createBroker("embedded:0");
    await broker.start();
    try {
      const { port } = new URL(broker.url);
      const socket = connect({ host: "127.0.0.1", port: Number(port) });
      const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
      socket.on("error", () => {});
      socket.write(Buffer.concat([header(0x10, 250 * 2 ** 20), Buffer.alloc(64 * 1024)]));
      await within(closed, "the oversized CONNECT's connection to close");
      expect(MAX_PACKET_BYTES).toBeGreaterThan(1024 * 1024);
      const client = await connectClient(broker.url, {
        clientId: "after",
        clean: true,
        reconnectPeriod: 0,
      });
      await client.endAsync();
    } finally {
      await broker.stop();
    }
  });
});
