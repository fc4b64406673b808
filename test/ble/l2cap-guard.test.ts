import { describe, expect, it } from "vitest";
import { answersCommand, guardFromAir } from "../../src/ble/hci/l2cap-guard.ts";
import { EmulatedHciSocket } from "../../src/ble/socket/emulated-socket.ts";
import { HciAdapter } from "../../src/ble/socket/hci-adapter.ts";
import type { HciTransport } from "../../src/ble/socket/transport.ts";

/** An ACL start fragment from the controller on handle 0x0040 carrying `hex` on channel `cid`. */
function fromAir(hex: string, cid = 0x0004): Buffer {
  const pdu = Buffer.from(hex, "hex");
  const packet = Buffer.alloc(9 + pdu.length);
  packet[0] = 0x02;
  packet.writeUInt16LE(0x0040 | (0b10 << 12), 1);
  packet.writeUInt16LE(4 + pdu.length, 3);
  packet.writeUInt16LE(pdu.length, 5);
  packet.writeUInt16LE(cid, 7);
  pdu.copy(packet, 9);
  return packet;
}

/** The L2CAP PDU (length, channel, payload) the guard answers with, if any. */
function answerOn(hex: string, cid: number): string | undefined {
  const verdict = guardFromAir(fromAir(hex, cid));
  if (verdict.deliver) return "delivered";
  return verdict.reply?.subarray(5).toString("hex");
}

/** The ATT PDU of an answer the guard sends back on handle 0x0040. */
function answered(att: string): string | undefined {
  const verdict = guardFromAir(fromAir(att));
  if (verdict.deliver) return "delivered";
  if (verdict.reply === undefined) return undefined;
  expect(verdict.reply.subarray(0, 9)).toEqual(Buffer.from("024000090005000400", "hex"));
  return verdict.reply.subarray(9).toString("hex");
}

describe("the ATT guard before the host stacks (Vol 3 Part F)", () => {
  it("answers a request too short for its fields with Invalid PDU (§3.4.1.1), naming the request", () => {
    for (const [request, opcode] of [
      ["02", "02"],
      ["0217", "02"],
      ["0a", "0a"],
      ["0a03", "0a"],
      ["0c0300", "0c"],
      ["040100", "04"],
      ["12", "12"],
      ["161a00", "16"],
      ["060100ffff", "06"],
      ["080100ffff", "08"],
      ["100100ffff", "10"],
      // Read By Type with a 3-octet UUID: neither 16 nor 128 bits.
      ["080100ffff032800", "08"],
    ] as const) {
      expect(answered(request), request).toBe(`01${opcode}000004`);
    }
  });

  it("answers a fixed-size request that runs past its fields with Invalid PDU, as BlueZ does", () => {
    // Exchange MTU, Find Information, Read, Read Blob and Execute Write have no field of variable
    // length (§3.4.2.1, §3.4.3.1, §3.4.4.3, §3.4.4.5, §3.4.6.3): an octet more is no such PDU.
    // The hosts read the fields they know and answered as if it were well formed.
    for (const [request, opcode] of [
      ["02170000", "02"],
      ["040100ffff00", "04"],
      ["0a030000", "0a"],
      ["0c0300000000", "0c"],
      ["180100", "18"],
    ] as const) {
      expect(answered(request), request).toBe(`01${opcode}000004`);
    }
    for (const pdu of ["021700", "040100ffff", "0a0300", "0c03000000", "1801"]) {
      expect(answered(pdu), pdu).toBe("delivered");
    }
  });

  it("answers a handle range that starts at 0 or ends before it starts with Invalid Handle", () => {
    expect(answered("040000ffff")).toBe("0104000001");
    expect(answered("0405000100")).toBe("0104050001");
    expect(answered("080000ffff0328")).toBe("0108000001");
    expect(answered("10050001000028")).toBe("0110050001");
    expect(answered("060000ffff00280018")).toBe("0106000001");
  });

  it("lets well-formed PDUs through, and drops short commands, unknown commands and short notifications", () => {
    for (const pdu of ["021700", "0a0300", "080100ffff0328", "100100ffff0028", "52030041", "30"]) {
      expect(answered(pdu), pdu).toBe("delivered");
    }
    for (const pdu of ["52ff", "7f", "d20300aabbccddeeff00112233445566", "1b03", ""]) {
      expect(answered(pdu), pdu).toBeUndefined();
    }
  });

  it("drops a list response whose entry Length is 0 or does not divide the list (noble looped for ever on Length 0)", () => {
    for (const pdu of [
      "1100010005000018", // Read By Group Type Response, Length 0
      "0900020003030000", // Read By Type Response, Length 0
      "1105010005000018", // Length 5 over 6 octets
      "110601000500", // no whole entry
      "0503020002290300", // Find Information Response, format 3
      "050102000229030000", // format 1, 7 octets of entries
    ]) {
      expect(answered(pdu), pdu).toBeUndefined();
    }
    for (const pdu of [
      "1106010005000018060009000118", // two services of 6 octets
      "09070200020300002a", // one characteristic declaration
      "050102000229", // one 16-bit descriptor
    ]) {
      expect(answered(pdu), pdu).toBe("delivered");
    }
  });

  it("keeps a host from answering a command (bleno's Error Response to a Write Command)", () => {
    const fromHost = (att: string) => {
      const packet = fromAir(att);
      packet.writeUInt16LE(0x0040, 1); // a host's start fragment, not flushable
      return packet;
    };
    expect(answersCommand(fromHost("0152ffff01"))).toBe(true);
    expect(answersCommand(fromHost("0112ffff01"))).toBe(false); // to a Write Request: sent
    expect(answersCommand(fromHost("1b0300aa"))).toBe(false);
  });

  it("answers LE signaling requests the stacks do not know with Command Reject (Vol 3 Part A §4.1)", () => {
    // Information Request (BR/EDR only), an unknown code, LE Credit Based Connection Request.
    expect(answerOn("0a0202000200", 5)).toBe("06000500" + "010202000000");
    expect(answerOn("ff010000", 5)).toBe("06000500" + "010102000000");
    expect(answerOn("1404" + "0a00" + "8000" + "4000" + "1700" + "1700" + "0a00", 5)).toBe(
      "06000500010402000000",
    );
    // A Connection Parameter Update Request noble would read past the end of: rejected.
    expect(answerOn("12070400" + "0600" + "0c00", 5)).toBe("06000500010702000000");
    expect(answerOn("12070800" + "06000c0000006400", 5)).toBe("delivered");
    expect(answerOn("13070200" + "0000", 5)).toBe("delivered");
    // Answers to requests never made, and half a header: dropped.
    expect(answerOn("01090200" + "0000", 5)).toBeUndefined();
    expect(answerOn("12", 5)).toBeUndefined();
  });

  it("fails pairing on an SMP command of the wrong length or an unknown one (Vol 3 Part H §3.5.5)", () => {
    expect(answerOn("01", 6)).toBe("02000600" + "050a");
    expect(answerOn("0103000010000001", 6)).toBe("02000600050a");
    expect(answerOn("20", 6)).toBe("02000600" + "0507");
    expect(answerOn("01030000100000", 6)).toBe("delivered");
    expect(answerOn("05", 6)).toBeUndefined();
  });

  it("leaves other channels, continuations and HCI events alone", () => {
    const dynamic = fromAir("01");
    dynamic.writeUInt16LE(0x0040, 7);
    expect(guardFromAir(dynamic).deliver).toBe(true);
    const continuation = fromAir("02");
    continuation.writeUInt16LE(0x0040 | (0b01 << 12), 1);
    expect(guardFromAir(continuation).deliver).toBe(true);
    expect(guardFromAir(Buffer.from("040e0401030c00", "hex")).deliver).toBe(true);
  });

  it("on an adapter, the host never sees the truncated request and the controller gets the answer", async () => {
    const { sent, seen, toHost, close } = adapterHarness();
    toHost(fromAir("02"));
    toHost(fromAir("021700"));
    await Promise.resolve();
    expect(seen).toEqual([fromAir("021700")]);
    expect(sent.map((p) => p.toString("hex"))).toEqual(["0240000900050004000102000004"]);
    close();
  });
});

/** An EmulatedHciSocket on an adapter whose transport the test drives: what the host saw, what went to the controller. */
function adapterHarness() {
  const sent: Buffer[] = [];
  let toHost: (packet: Buffer) => void = () => {};
  const transport: HciTransport = {
    send: (packet) => sent.push(packet),
    setReceiver: (receiver) => {
      toHost = receiver;
    },
    close: () => {},
  };
  const adapter = new HciAdapter(0, transport);
  const socket = new EmulatedHciSocket(adapter);
  const seen: Buffer[] = [];
  socket.on("data", (d: Buffer) => seen.push(d));
  socket.bindUser(0);
  socket.start();
  const close = () => {
    socket.stop();
    adapter.close();
  };
  return { sent, seen, toHost: (p: Buffer) => toHost(p), close };
}

/** An L2CAP PDU on channel `cid` of handle 0x0040, split as a controller does into ACL packets of `size` octets. */
function fragmentsFromAir(hex: string, size: number, cid = 0x0004): Buffer[] {
  const pdu = Buffer.alloc(4);
  pdu.writeUInt16LE(hex.length / 2, 0);
  pdu.writeUInt16LE(cid, 2);
  const l2cap = Buffer.concat([pdu, Buffer.from(hex, "hex")]);
  const out: Buffer[] = [];
  for (let at = 0; at < l2cap.length; at += size) {
    const data = l2cap.subarray(at, at + size);
    const packet = Buffer.alloc(5 + data.length);
    packet[0] = 0x02;
    packet.writeUInt16LE(0x0040 | ((at === 0 ? 0b10 : 0b01) << 12), 1);
    packet.writeUInt16LE(data.length, 3);
    data.copy(packet, 5);
    out.push(packet);
  }
  return out;
}

describe("the guard on PDUs the controller splits over several ACL packets (Vol 3 Part A §7.2)", () => {
  it("keeps a fragmented Read By Type Response with entry Length 0 from noble (its endless loop)", async () => {
    const h = adapterHarness();
    // 2 + 36 octets of list in a 40-octet ATT PDU: 44 octets of L2CAP in two 27-octet packets.
    for (const p of fragmentsFromAir(`0900${"ab".repeat(38)}`, 27)) h.toHost(p);
    await Promise.resolve();
    expect(h.seen).toEqual([]);
    h.close();
  });

  it("answers a fragmented request of the wrong length as a whole one (Invalid PDU)", async () => {
    const h = adapterHarness();
    // Read By Type Request of 25 octets: neither a 16- nor a 128-bit UUID.
    for (const p of fragmentsFromAir(`080100ffff${"cd".repeat(20)}`, 27)) h.toHost(p);
    await Promise.resolve();
    expect(h.seen).toEqual([]);
    expect(h.sent.map((p) => p.toString("hex"))).toEqual(["0240000900050004000108000004"]);
    h.close();
  });

  it("hands a well-formed fragmented PDU on as the fragments came, and what a disconnection cuts short", async () => {
    const h = adapterHarness();
    const good = fragmentsFromAir(`1b2a00${"ef".repeat(40)}`, 27); // a 43-octet notification
    for (const p of good) h.toHost(p);
    const cut = fragmentsFromAir(`1b2a00${"ef".repeat(40)}`, 27)[0]!;
    h.toHost(cut);
    const disconnected = Buffer.from("0405040040001300", "hex").subarray(0, 7);
    h.toHost(disconnected);
    await Promise.resolve();
    expect(h.seen).toEqual([...good, cut, disconnected]);
    h.close();
  });
});
