import { connect } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createBroker } from "../../src/mqtt/broker.ts";
import { connectClient } from "../../src/mqtt/client.ts";
import {
  MAX_PACKET_BYTES,
  type PacketViolation,
  PacketWatch,
} from "../../src/mqtt/packet-watch.ts";
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

function watched(stream: Buffer, cuts: number[], limit: number): PacketViolation[] {
  const over: PacketViolation[] = [];
  const watch = new PacketWatch(limit, (violation) => over.push(violation));
  let at = 0;
  for (const cut of cuts.filter((c) => c > 0 && c < stream.length).sort((a, b) => a - b)) {
    watch.push(stream.subarray(at, cut));
    at = cut;
  }
  watch.push(stream.subarray(at));
  return over;
}

/**
 * A raw CONNECT (client id "raw") with `flags` and, if set, a will; MQTT 3.1.1 unless `protocol`
 * says otherwise.
 */
function rawConnect(
  flags: number,
  will?: { topic: string; message: string },
  protocol = { name: "MQTT", level: 4 },
): Buffer {
  const str = (v: string) => {
    const b = Buffer.from(v);
    return Buffer.concat([Buffer.from([b.length >> 8, b.length & 0xff]), b]);
  };
  const body = Buffer.concat([
    str(protocol.name),
    Buffer.from([protocol.level, flags, 0, 60]),
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

/** SUBSCRIBE (0x82) or UNSUBSCRIBE (0xA2) of "t/a" with packet identifier `id`. */
function rawSubscription(type: 0x82 | 0xa2, id: number): Buffer {
  const body = Buffer.from([
    id >> 8,
    id & 0xff,
    0,
    3,
    ...Buffer.from("t/a"),
    ...(type === 0x82 ? [1] : []),
  ]);
  return Buffer.concat([header(type, body.length), body]);
}

/** Runs `run` against an embedded broker on a free port, stopped after it. */
async function onEmbeddedBroker(run: (url: string) => Promise<void>): Promise<void> {
  const broker = createBroker("embedded:0");
  await broker.start();
  try {
    await run(broker.url);
  } finally {
    await broker.stop();
  }
}

describe("embedded broker protocol checks", () => {
  it("answers a CONNECT at a protocol level it does not speak with CONNACK 0x01, then closes ([MQTT-3.1.2-2])", async () => {
    await onEmbeddedBroker(async (url) => {
      for (const level of [5, 6, 2, 0x86]) {
        const answer = await exchange(url, [rawConnect(0x02, undefined, { name: "MQTT", level })]);
        expect(answer).toEqual({ got: Buffer.from("20020001", "hex"), closed: true });
      }
    });
  });

  it("closes a SUBSCRIBE or UNSUBSCRIBE with packet identifier 0 ([MQTT-2.3.1-1]) instead of acknowledging it", async () => {
    await onEmbeddedBroker(async (url) => {
      for (const type of [0x82, 0xa2] as const) {
        const zero = await exchange(url, [rawConnect(0x02), rawSubscription(type, 0)]);
        // Closed as soon as the SUBSCRIBE arrives: with or without the CONNACK, never a SUBACK.
        expect(zero.closed).toBe(true);
        expect(["", "20020000"]).toContain(zero.got.toString("hex"));
      }
      // Identifier 9: SUBACK granting QoS 1, then UNSUBACK.
      const nine = await exchange(
        url,
        [rawConnect(0x02), rawSubscription(0x82, 9), rawSubscription(0xa2, 9)],
        (g) => g.length >= 13,
      );
      expect(nine).toEqual({
        got: Buffer.from("2002000090030009 01b0020009".replace(" ", ""), "hex"),
        closed: false,
      });
    });
  });

  it("closes a CONNECT whose will has QoS 3 ([MQTT-3.1.2-14]) without CONNACK", async () => {
    await onEmbeddedBroker(async (url) => {
      // Clean session, will flag, will QoS 3 (bits 3–4).
      const bad = await exchange(url, [
        rawConnect(0x02 | 0x04 | 0x18, { topic: "t/w", message: "x" }),
      ]);
      expect(bad.closed).toBe(true);
      expect(bad.got.length).toBe(0);
    });
  });

  it("closes a QoS 1 PUBLISH with packet identifier 0 ([MQTT-2.3.1-1]) instead of acknowledging it", async () => {
    await onEmbeddedBroker(async (url) => {
      const topic = Buffer.from([0, 3, ...Buffer.from("t/a")]);
      const publish = (id: number) =>
        Buffer.concat([
          header(0x32, topic.length + 2 + 2),
          topic,
          Buffer.from([id >> 8, id & 0xff, 0x7b, 0x7d]),
        ]);
      const zero = await exchange(url, [rawConnect(0x02), publish(0)]);
      expect(zero.closed).toBe(true);
      expect(zero.got.toString("hex")).toBe("20020000"); // CONNACK only, no PUBACK
      // The same PUBLISH with identifier 7 is acknowledged.
      const seven = await exchange(url, [rawConnect(0x02), publish(7)], (g) => g.length >= 8);
      expect(seven).toEqual({ got: Buffer.from("2002000040020007", "hex"), closed: false });
    });
  });
});

describe("MQTT packet watch", () => {
  it("lets packets up to the limit through whatever the chunking, and reports the first one over it", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 300 }), { minLength: 1, maxLength: 12 }),
        fc.array(fc.nat(4000), { maxLength: 20 }),
        (sizes, cuts) => {
          expect(watched(Buffer.concat(sizes.map(packet)), cuts, 300)).toEqual([]);
          const over = Buffer.concat([...sizes.map(packet), header(0x30, 301), packet(5)]);
          expect(watched(over, cuts, 300)).toEqual([{ kind: "too-large", length: 301 }]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("reports a SUBSCRIBE or UNSUBSCRIBE with packet identifier 0, and a CONNECT at an unknown level, whatever the chunking", () => {
    fc.assert(
      fc.property(fc.array(fc.nat(60), { maxLength: 8 }), (cuts) => {
        const fine = Buffer.concat([
          rawConnect(0x02),
          rawSubscription(0x82, 1),
          rawSubscription(0xa2, 256),
          packet(20),
        ]);
        expect(watched(fine, cuts, 1000)).toEqual([]);
        expect(watched(Buffer.concat([fine, rawSubscription(0x82, 0)]), cuts, 1000)).toEqual([
          { kind: "packet-id-zero", packet: "SUBSCRIBE" },
        ]);
        expect(watched(Buffer.concat([fine, rawSubscription(0xa2, 0)]), cuts, 1000)).toEqual([
          { kind: "packet-id-zero", packet: "UNSUBSCRIBE" },
        ]);
        const v5 = rawConnect(0x02, undefined, { name: "MQTT", level: 5 });
        expect(watched(v5, cuts, 1000)).toEqual([{ kind: "protocol-level", level: 5 }]);
        // MQTT 3.1 is spoken too; a name that is not MQTT's is aedes' to refuse.
        const v3 = rawConnect(0x02, undefined, { name: "MQIsdp", level: 3 });
        const other = rawConnect(0x02, undefined, { name: "XMPP", level: 9 });
        expect(watched(Buffer.concat([v3, other]), cuts, 1000)).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });

  it("takes a fifth length octet as malformed ([MQTT-2.2.3]: at most four)", () => {
    expect(watched(Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff, 0x01]), [], 1e9)).toEqual([
      { kind: "too-large", length: null },
    ]);
  });

  it("the embedded broker closes a connection announcing 250 MiB before CONNECT, and serves others", async () => {
    await onEmbeddedBroker(async (url) => {
      const { port } = new URL(url);
      const socket = connect({ host: "127.0.0.1", port: Number(port) });
      const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
      socket.on("error", () => {});
      socket.write(Buffer.concat([header(0x10, 250 * 2 ** 20), Buffer.alloc(64 * 1024)]));
      await within(closed, "the oversized CONNECT's connection to close");
      expect(MAX_PACKET_BYTES).toBeGreaterThan(1024 * 1024);
      const client = await connectClient(url, {
        clientId: "after",
        clean: true,
        reconnectPeriod: 0,
      });
      await client.endAsync();
    });
  });
});
