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
