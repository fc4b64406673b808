import { MAX_PAYLOAD_BYTES } from "./payload.ts";

/**
 * The largest MQTT packet the embedded broker takes (Remaining Length, [MQTT-2.2.3]): a payload
 * of the most the lab ingests plus the longest topic and the variable header. Larger, and the
 * connection is closed as Mosquitto's `max_packet_size` closes it; MQTT 3.1.1 sets no limit of
 * its own (up to 256 MiB) and aedes none at all, so one client could make the broker buffer a
 * quarter of a gigabyte per packet, before CONNECT even, and hold back every other gateway's
 * acknowledgements while it was stored.
 */
export const MAX_PACKET_BYTES = MAX_PAYLOAD_BYTES + 2 + 65_535 + 2;

/** A packet the broker must not pass on to aedes, and what the protocol says to do about it. */
export type PacketViolation =
  /** Remaining Length over the limit, or null when malformed (a fifth length octet, §2.2.3). */
  | { readonly kind: "too-large"; readonly length: number | null }
  /**
   * SUBSCRIBE or UNSUBSCRIBE with packet identifier 0 ([MQTT-2.3.1-1]: non-zero): aedes would
   * acknowledge it as packet 0. A protocol violation: the connection is closed.
   */
  | { readonly kind: "packet-id-zero"; readonly packet: "SUBSCRIBE" | "UNSUBSCRIBE" }
  /**
   * A CONNECT of the MQTT protocol at a level the broker does not speak (aedes 1.x: 3.1 and
   * 3.1.1): [MQTT-3.1.2-2] answers CONNACK 0x01 (unacceptable protocol level), then closes.
   * mqtt-packet cannot parse levels other than 3, 4 and 5, and aedes closed those without a word.
   */
  | { readonly kind: "protocol-level"; readonly level: number };

/** Levels aedes 1.x speaks (3.1, 3.1.1), the top bit (a bridge) aside. */
const SPOKEN_LEVELS = new Set([3, 4]);
/** Protocol names of MQTT 3.1 and 3.1.1/5 ([MQTT-3.1.2-1]). */
const PROTOCOL_NAMES = new Set(["MQIsdp", "MQTT"]);
/** Body octets a check needs at most: a CONNECT's name length, "MQIsdp" and the level. */
const HEAD_OCTETS = 2 + 6 + 1;

const CONNECT = 1;
const SUBSCRIBE = 8;
const UNSUBSCRIBE = 10;

/**
 * Follows the MQTT packets of a byte stream, chunk by chunk, and reports the first that breaks a
 * rule (PacketViolation) as soon as the octets that show it have arrived. Only a packet's fixed
 * header and first few body octets are kept: a large packet is never buffered here.
 */
export class PacketWatch {
  /** Octets of the current packet's body still to skip. */
  private skip = 0;
  /** Inside a fixed header: length octets read so far (-1: at the packet type octet). */
  private lengthOctets = -1;
  private type = 0;
  private length = 0;
  private multiplier = 1;
  /** The current packet's first body octets, while a check still needs them. */
  private head: number[] | undefined;
  private headWanted = 0;
  private tripped = false;

  constructor(
    private readonly limit: number,
    private readonly violated: (violation: PacketViolation) => void,
  ) {}

  push(chunk: Uint8Array): void {
    let at = 0;
    while (at < chunk.length && !this.tripped) {
      if (this.head !== undefined) {
        this.head.push(chunk[at++]!);
        this.skip--;
        if (this.head.length === this.headWanted) this.checkHead();
        continue;
      }
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - at);
        this.skip -= n;
        at += n;
        continue;
      }
      const octet = chunk[at++]!;
      if (this.lengthOctets === -1) {
        this.type = octet >> 4;
        this.lengthOctets = 0;
        this.length = 0;
        this.multiplier = 1;
        continue;
      }
      this.length += (octet & 0x7f) * this.multiplier;
      this.multiplier *= 128;
      this.lengthOctets++;
      if (octet & 0x80) {
        if (this.lengthOctets === 4) this.trip({ kind: "too-large", length: null });
        continue;
      }
      this.lengthOctets = -1;
      if (this.length > this.limit) {
        this.trip({ kind: "too-large", length: this.length });
        continue;
      }
      this.skip = this.length;
      this.headWanted = Math.min(this.length, this.headOctets());
      if (this.headWanted > 0) this.head = [];
    }
  }

  /** Body octets the current packet's check reads. */
  private headOctets(): number {
    if (this.type === SUBSCRIBE || this.type === UNSUBSCRIBE) return 2;
    return this.type === CONNECT ? HEAD_OCTETS : 0;
  }

  private checkHead(): void {
    const head = this.head!;
    this.head = undefined;
    if (this.type === SUBSCRIBE || this.type === UNSUBSCRIBE) {
      if (head[0] === 0 && head[1] === 0) {
        this.trip({
          kind: "packet-id-zero",
          packet: this.type === SUBSCRIBE ? "SUBSCRIBE" : "UNSUBSCRIBE",
        });
      }
      return;
    }
    // CONNECT: a name of length n, then the level ([MQTT-3.1.2-1], [MQTT-3.1.2-2]). A name
    // that is not MQTT's is left to aedes (it closes the connection, as the spec allows).
    const nameLength = ((head[0] ?? 0) << 8) | (head[1] ?? 0);
    if (nameLength > HEAD_OCTETS - 3 || head.length < 3 + nameLength) return;
    const name = String.fromCharCode(...head.slice(2, 2 + nameLength));
    const level = head[2 + nameLength]! & 0x7f;
    if (PROTOCOL_NAMES.has(name) && !SPOKEN_LEVELS.has(level)) {
      this.trip({ kind: "protocol-level", level });
    }
  }

  private trip(violation: PacketViolation): void {
    this.tripped = true;
    this.violated(violation);
  }
}
