/**
 * Fuzzed HCI command and ACL bytes never crash the controller, and each command gets the
 * protocol's own answer: exactly one Command Complete or Command Status for its opcode, Unknown
 * HCI Command (0x01) for an opcode it does not know, Invalid HCI Command Parameters (0x12) for a
 * length that does not match, and return parameters a host can always read.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/ble/controller/commands.ts";
import { EVT, H4, STATUS } from "../../src/ble/hci/constants.ts";
import { connect, twoControllers } from "./support/two-controllers.ts";

const KNOWN = [...COMMANDS.keys()];

function connectedPair() {
  const t = twoControllers("fuzz");
  const handles = connect(t);
  return { ...t, ...handles };
}

describe("controller fuzz", () => {
  it("answers every command packet exactly once with its own status (3,000 cases)", () => {
    let t = connectedPair();
    fc.assert(
      fc.property(
        fc.oneof(fc.constantFrom(...KNOWN), fc.integer({ min: 0, max: 0xffff })),
        fc.uint8Array({ maxLength: 40 }),
        fc.oneof(fc.constant(-1), fc.integer({ min: 0, max: 255 })),
        fc.boolean(),
        (opcode, params, declared, useHandle) => {
          if (t.central.connections.size === 0) t = connectedPair();
          const body = Buffer.from(params);
          if (useHandle && body.length >= 2) body.writeUInt16LE(t.ch, 0);
          const length = declared < 0 ? body.length : declared;
          const packet = Buffer.concat([
            Buffer.from([H4.COMMAND, opcode & 0xff, opcode >> 8, length]),
            body,
          ]);
          t.c.clear();
          expect(() => t.central.receive(packet)).not.toThrow();
          t.clock.runSync({ until: t.clock.now() + 50 });
          const answers = t.c.received.filter(
            (p) =>
              p[0] === H4.EVENT &&
              ((p[1] === EVT.COMMAND_COMPLETE && p.readUInt16LE(4) === opcode) ||
                (p[1] === EVT.COMMAND_STATUS && p.readUInt16LE(5) === opcode)),
          );
          expect(answers).toHaveLength(1);
          const answer = answers[0]!;
          const status = answer[1] === EVT.COMMAND_COMPLETE ? answer[6] : answer[3];
          const entry = COMMANDS.get(opcode);
          if (entry === undefined) expect(status).toBe(STATUS.UNKNOWN_COMMAND);
          else {
            expect(answer[1]).toBe(
              entry.kind === "complete" ? EVT.COMMAND_COMPLETE : EVT.COMMAND_STATUS,
            );
            if (length !== body.length || body.length !== entry.length)
              expect(status).toBe(STATUS.INVALID_PARAMETERS);
            if (entry.kind === "complete") expect(answer.length).toBe(7 + entry.returnLength);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("takes any ACL bytes: delivers, or discards and counts, never throws (3,000 cases)", () => {
    let t = connectedPair();
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 80 }),
        fc.integer({ min: 0, max: 3 }),
        fc.boolean(),
        fc.boolean(),
        (data, pb, useHandle, lie) => {
          if (t.central.connections.size === 0) t = connectedPair();
          const handle = useHandle ? t.ch : 0x0fff;
          const packet = Buffer.alloc(5 + data.length);
          packet[0] = H4.ACL;
          packet.writeUInt16LE(handle | (pb << 12), 1);
          packet.writeUInt16LE(lie ? (data.length + 1) & 0xffff : data.length, 3);
          packet.set(data, 5);
          const before = { ...t.central.stats };
          expect(() => t.central.receive(packet)).not.toThrow();
          t.clock.runSync({ until: t.clock.now() + 50 });
          const discarded = t.central.stats.aclDiscarded - before.aclDiscarded;
          const wellFormed = useHandle && !lie && pb !== 0b11;
          expect(discarded).toBe(wellFormed ? 0 : 1);
          // Every accepted packet is acknowledged: the buffers all come back.
          expect(t.central.freeBuffers).toBe(t.central.aclBufferCount);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("takes any bytes at all as a packet without throwing (2,000 cases)", () => {
    const t = connectedPair();
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 64 }), (bytes) => {
        expect(() => t.central.receive(Buffer.from(bytes))).not.toThrow();
        t.clock.runSync({ until: t.clock.now() + 20 });
      }),
      { numRuns: 2000 },
    );
  });
});
