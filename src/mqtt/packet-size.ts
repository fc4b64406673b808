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

/**
 * Follows the MQTT fixed headers of a byte stream, chunk by chunk, and reports the first packet
 * whose Remaining Length is over `limit` (or malformed: more than four length octets, §2.2.3),
 * as soon as its header has arrived.
 */
export class PacketSizeWatch {
  /** Octets of the current packet's body still to skip. */
  private skip = 0;
  /** Inside a fixed header: length octets read so far (-1: at the packet type octet). */
  private lengthOctets = -1;
  private length = 0;
  private multiplier = 1;
  private tripped = false;

  constructor(
    private readonly limit: number,
    private readonly over: (length: number | null) => void,
  ) {}

  push(chunk: Uint8Array): void {
    let at = 0;
    while (at < chunk.length && !this.tripped) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - at);
        this.skip -= n;
        at += n;
        continue;
      }
      const octet = chunk[at++]!;
      if (this.lengthOctets === -1) {
        this.lengthOctets = 0;
        this.length = 0;
        this.multiplier = 1;
        continue;
      }
      this.length += (octet & 0x7f) * this.multiplier;
      this.multiplier *= 128;
      this.lengthOctets++;
      if (octet & 0x80) {
        if (this.lengthOctets === 4) this.trip(null);
        continue;
      }
      if (this.length > this.limit) this.trip(this.length);
      this.skip = this.length;
      this.lengthOctets = -1;
    }
  }

  private trip(length: number | null): void {
    this.tripped = true;
    this.over(length);
  }
}
