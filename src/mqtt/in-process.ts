import { Duplex } from "node:stream";

type Accept = (stream: Duplex) => void;

/**
 * The embedded brokers running in this process, by address. A client of this same process
 * (a scenario's or the demo's gateways and cellular devices) reaches one over a pair of
 * in-memory streams instead of a loopback socket: the same MQTT packets, parsed by the same
 * MQTT.js and aedes, without two syscalls and a trip through libuv per packet: 24–30 % of a
 * scenario run's CPU (test/bench/scenario-cohort.ts at 50 and 200 patients). Clients in other
 * processes, and every client of an external broker, use TCP.
 */
const brokers = new Map<string, Accept>();
const PLAIN = new Set(["mqtt:", "tcp:"]);

/** Registers a broker listening at `url`; the returned function removes it (broker stopped). */
export function registerInProcess(url: string, accept: Accept): () => void {
  const key = addressOf(url);
  brokers.set(key, accept);
  return () => {
    if (brokers.get(key) === accept) brokers.delete(key);
  };
}

/**
 * A stream builder for MQTT.js when `url` names an embedded broker of this process, else
 * undefined. Called on every (re)connection: while the broker is stopped the stream fails as a
 * refused connection does, and MQTT.js retries as it would over TCP.
 */
export function inProcessStreamBuilder(url: string): (() => Duplex) | undefined {
  // The embedded broker speaks plain MQTT on TCP; any other scheme is left to MQTT.js.
  if (!PLAIN.has(new URL(url).protocol)) return undefined;
  const key = addressOf(url);
  if (!brokers.has(key)) return undefined;
  return () => {
    const [client, broker] = duplexPair();
    const accept = brokers.get(key);
    if (accept === undefined) {
      const refused = Object.assign(new Error(`connect ECONNREFUSED ${key}`), {
        code: "ECONNREFUSED",
      });
      process.nextTick(() => client.destroy(refused));
    } else {
      accept(broker);
    }
    return client;
  };
}

/** Host and port: a URL with credentials or a path names the same broker. */
function addressOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port}`;
}

/**
 * Two connected streams: what one writes the other reads, ending one ends the other's reading,
 * and destroying one destroys the other (a connection lost without DISCONNECT: the broker
 * publishes the will, [MQTT-3.1.2-8]). The reader gets what was written on a later tick, never
 * inside the writer's call, as from a socket: a broker answering a PUBLISH with a PUBACK does
 * not run the client's handler in the middle of its own.
 *
 * There is no backpressure: a write completes at once, and what the reader has not taken waits
 * in its readable buffer (aedes reads a batch, handles it, then reads the next). Over TCP the
 * same bytes would wait in the writer's buffer instead; both ends are in this process, so
 * the memory is the same.
 */
export function duplexPair(): [Duplex, Duplex] {
  const sides: Duplex[] = [];
  const side = (peer: () => Duplex) => {
    // Chunks written and not yet handed over; null ends the peer's reading.
    let queued: (Buffer | null)[] = [];
    const handOver = () => {
      const other = peer();
      const chunks = queued;
      queued = [];
      if (other.destroyed) return;
      for (const chunk of chunks) other.push(chunk);
    };
    const send = (chunk: Buffer | null) => {
      if (queued.push(chunk) === 1) process.nextTick(handOver);
    };
    return new Duplex({
      read() {},
      write(chunk: Buffer, _encoding, callback) {
        send(chunk);
        callback();
      },
      final(callback) {
        send(null);
        callback();
      },
      destroy(error, callback) {
        const other = peer();
        if (!other.destroyed) other.destroy();
        callback(error);
      },
    });
  };
  sides.push(
    side(() => sides[1]!),
    side(() => sides[0]!),
  );
  return [sides[0]!, sides[1]!];
}
