import { describe, expect, it } from "vitest";
import { answersCommand, guardAtt } from "../../src/ble/hci/att-guard.ts";
import { EmulatedHciSocket } from "../../src/ble/socket/emulated-socket.ts";
import { HciAdapter } from "../../src/ble/socket/hci-adapter.ts";
import type { HciTransport } from "../../src/ble/socket/transport.ts";

/** An ACL start fragment from the controller on handle 0x0040 carrying `att` on the ATT channel. */
function fromAir(att: string): Buffer {
  const pdu = Buffer.from(att, "hex");
  const packet = Buffer.alloc(9 + pdu.length);
  packet[0] = 0x02;
  packet.writeUInt16LE(0x0040 | (0b10 << 12), 1);
  packet.writeUInt16LE(4 + pdu.length, 3);
  packet.writeUInt16LE(pdu.length, 5);
  packet.writeUInt16LE(0x0004, 7);
  pdu.copy(packet, 9);
  return packet;
}

/** The ATT PDU of an answer the guard sends back on handle 0x0040. */
function answered(att: string): string | undefined {
  const verdict = guardAtt(fromAir(att));
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

  it("leaves other channels, continuations and HCI events alone", () => {
    const smp = fromAir("01");
    smp.writeUInt16LE(0x0006, 7);
    expect(guardAtt(smp).deliver).toBe(true);
    const continuation = fromAir("02");
    continuation.writeUInt16LE(0x0040 | (0b01 << 12), 1);
    expect(guardAtt(continuation).deliver).toBe(true);
    expect(guardAtt(Buffer.from("040e0401030c00", "hex")).deliver).toBe(true);
  });

  it("on an adapter, the host never sees the truncated request and the controller gets the answer", async () => {
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
    toHost(fromAir("02"));
    toHost(fromAir("021700"));
    await Promise.resolve();
    expect(seen).toEqual([fromAir("021700")]);
    expect(sent.map((p) => p.toString("hex"))).toEqual(["0240000900050004000102000004"]);
    socket.stop();
    adapter.close();
  });
});
