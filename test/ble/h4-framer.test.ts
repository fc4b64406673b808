import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { H4Framer } from "../../src/ble/hci/h4-framer.ts";

/** synthetic:Core 5.4 Vol 4 Part A §2 — one packet of each H4 type a host and controller exchange. */
const PACKETS = [
  Buffer.from("01030c00", "hex"), // HCI_Reset command
  Buffer.from("040e0401030c00", "hex"), // Command Complete for Reset
  Buffer.from("024000070003000400010203", "hex"), // ACL: handle 0x040, L2CAP ATT
  Buffer.from("03400003aabbcc", "hex"), // SCO, 3 octets
  Buffer.from("0540000300000102", "hex"), // ISO, 3 octets
];

function framed(stream: Buffer, cuts: number[]): { packets: Buffer[]; desync: number[] } {
  const packets: Buffer[] = [];
  const desync: number[] = [];
  const framer = new H4Framer({ packet: (p) => packets.push(p), desync: (b) => desync.push(b) });
  let at = 0;
  for (const cut of [...cuts.filter((c) => c > 0 && c < stream.length)].sort((a, b) => a - b)) {
    framer.push(stream.subarray(at, cut));
    at = cut;
  }
  framer.push(stream.subarray(at));
  return { packets, desync };
}

describe("H4Framer", () => {
  it("yields the same packets whatever the chunking (random-chunk feed)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...PACKETS), { minLength: 1, maxLength: 20 }),
        fc.array(fc.nat(400), { maxLength: 30 }),
        (packets, cuts) => {
          const out = framed(Buffer.concat(packets), cuts);
          expect(out.packets).toEqual(packets);
          expect(out.desync).toEqual([]);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("reports and skips a byte that is no packet indicator, then finds the next packet", () => {
    const out = framed(Buffer.concat([Buffer.from([0x7f]), PACKETS[0]!]), [1, 3]);
    expect(out.desync).toEqual([0x7f]);
    expect(out.packets).toEqual([PACKETS[0]]);
  });

  it("reports a run of garbage once, however long, and again after a packet got through", () => {
    const garbage = Buffer.alloc(10_000, 0xff);
    const out = framed(Buffer.concat([garbage, PACKETS[0]!, garbage, PACKETS[1]!]), [5000, 12000]);
    expect(out.desync).toEqual([0xff, 0xff]);
    expect(out.packets).toEqual([PACKETS[0], PACKETS[1]]);
  });

  it("takes a length past the limit as a loss of sync (Vol 4 Part A §3), not a packet to wait for", () => {
    const packets: Buffer[] = [];
    const desync: number[] = [];
    const framer = new H4Framer(
      { packet: (p) => packets.push(p), desync: (b) => desync.push(b) },
      { 2: 27 },
    );
    // An ACL header announcing 65,535 octets, then a command: the command still gets through.
    framer.push(Buffer.concat([Buffer.from("024000ffff", "hex"), PACKETS[0]!]));
    expect(desync).toEqual([0x02]);
    expect(packets).toEqual([PACKETS[0]]);
    expect(framer.buffered).toBe(0);
  });

  it("holds a partial packet until the rest arrives", () => {
    const packets: Buffer[] = [];
    const framer = new H4Framer({ packet: (p) => packets.push(p), desync: () => undefined });
    framer.push(PACKETS[2]!.subarray(0, 6));
    expect(packets).toEqual([]);
    expect(framer.buffered).toBe(6);
    framer.push(PACKETS[2]!.subarray(6));
    expect(packets).toEqual([PACKETS[2]]);
  });
});
