/**
 * A peripheral whose GATT server is written here in raw ATT, as a real one answers where the
 * lab's virtual devices do not (Vol 3 Part F §3.4), and the gateway's central (noble,
 * unmodified, behind the lab's checks) connected to it.
 */
import { afterEach, expect } from "vitest";
import { VirtualController } from "../../../src/ble/controller/virtual-controller.ts";
import { H4, OP } from "../../../src/ble/hci/constants.ts";
import { type CentralLink, NobleCentral } from "../../../src/ble/hosts/central.ts";
import { EmulatedRadio } from "../../../src/ble/radio.ts";
import { DirectTransport } from "../../../src/ble/socket/direct-transport.ts";
import { EmulatedHciSocket } from "../../../src/ble/socket/emulated-socket.ts";
import { HciAdapter } from "../../../src/ble/socket/hci-adapter.ts";
import { Rng } from "../../../src/core/rng.ts";
import { VirtualClock } from "../../../src/core/virtual-clock.ts";
import { PairingResponder, type Peer } from "./just-works-responder.ts";
import { ScriptedHost } from "./scripted-host.ts";
import { advParams, dataParam } from "./two-controllers.ts";

/** What a test closes after it, last first. */
export type Closers = (() => Promise<void> | void)[];

const att = (...parts: (number | Buffer)[]): Buffer =>
  Buffer.concat(parts.map((p) => (Buffer.isBuffer(p) ? p : Buffer.from([p]))));
const le16 = (n: number): Buffer => Buffer.from([n & 0xff, n >> 8]);
const notFound = (opcode: number, handle: number) => att(0x01, opcode, le16(handle), 0x0a);

/**
 * One service 0xFFF0 (handles 1–4) with one readable, writable, notifying characteristic 0xFFF1
 * (value at handle 3, its CCCD at 4), served by a peripheral whose Server Rx MTU is `serverRx`. Responses are sized by
 * the ATT_MTU it agreed on (§3.4.2.2): a Read Response carries at most ATT_MTU−1 octets, the rest
 * comes by Read Blob (§3.4.4.4, §3.4.4.6). With `exchangeError`, an Exchange MTU Request gets
 * that Error Response; with `ownExchangeFirst`, the peripheral sends its own Exchange MTU Request
 * with that Client Rx MTU before it answers the client's.
 */
export function gattServer(
  serverRx: number,
  initial: Buffer,
  options: { exchangeError?: number; ownExchangeFirst?: number; properties?: number } = {},
) {
  /** `readError`: the code of an Error Response to the next Read Request, then cleared. */
  const state = {
    value: initial,
    mtu: 23,
    longestRequest: 0,
    readError: undefined as number | undefined,
    /** Read Blob answered from the value's start whatever the offset (firmware that ignores it). */
    blobIgnoresOffset: false,
    readBlobRequests: 0,
    /** The Client Rx MTU of this peripheral's own Exchange MTU Request, if it sent one. */
    ownRequestRx: undefined as number | undefined,
    /** The Server Rx MTU of the client's Exchange MTU Response to that request. */
    clientServerRx: undefined as number | undefined,
    /** PDUs to send before the answer to the PDU at hand. */
    outbox: [] as Buffer[],
    /** Read Requests are kept unanswered while set, until `release` answers them. */
    holdReads: false,
    held: [] as Buffer[],
    readRequests: 0,
    /** Every request's opcode as it came (Exchange MTU Responses aside). */
    opcodes: [] as number[],
    /** The code of an Error Response to the next Write Request to the value, then cleared. */
    writeError: undefined as number | undefined,
    /** Refuses the Prepare Write Request with this offset with this code. */
    prepareError: undefined as { offset: number; code: number } | undefined,
    /** The code of an Error Response to the next Execute Write Request that writes, then cleared. */
    executeError: undefined as number | undefined,
    /** The CCCD (handle 4), and the code of an Error Response to Write Requests to it. */
    cccd: 0,
    cccdError: undefined as number | undefined,
    /** Without a CCCD, Read By Type for one is Attribute Not Found. */
    hasCccd: true,
    /** Read By Type for the CCCD answers its handle with no value (a malformed entry). */
    cccdWithoutValue: false,
    /** The handle Read By Type for the CCCD answers (firmware that ignores the range: another's). */
    cccdHandle: 4,
    /** The answer to every Read By Group Type, and to every Read By Type of «Characteristic». */
    servicesResponse: undefined as Buffer | undefined,
    characteristicsResponse: undefined as Buffer | undefined,
    /** The flags of each Execute Write Request. */
    executeFlags: [] as number[],
  };
  let prepared: { offset: number; data: Buffer }[] = [];
  const answer = (pdu: Buffer): Buffer | undefined => {
    if (pdu[0] !== 0x03) {
      state.longestRequest = Math.max(state.longestRequest, pdu.length);
      state.opcodes.push(pdu[0]!);
    }
    switch (pdu[0]) {
      case 0x02:
        // A peripheral without Exchange MTU: ATT_MTU stays 23.
        if (options.exchangeError !== undefined) {
          return att(0x01, 0x02, le16(0), options.exchangeError);
        }
        if (options.ownExchangeFirst !== undefined) {
          state.outbox.push(exchangeMtu(options.ownExchangeFirst));
        }
        state.mtu = Math.max(23, Math.min(pdu.readUInt16LE(1), serverRx));
        return att(0x03, le16(serverRx));
      case 0x03:
        // The answer to this peripheral's own request (exchangeMtu below).
        state.clientServerRx = pdu.readUInt16LE(1);
        state.mtu = Math.max(23, Math.min(state.ownRequestRx!, state.clientServerRx));
        return undefined;
      case 0x10: {
        const start = pdu.readUInt16LE(1);
        if (state.servicesResponse !== undefined) return state.servicesResponse;
        if (start > 1) return notFound(0x10, start);
        return att(0x11, 6, le16(1), le16(4), le16(0xfff0));
      }
      case 0x08: {
        const start = pdu.readUInt16LE(1);
        if (pdu.readUInt16LE(5) === 0x2902) {
          if (!state.hasCccd) return notFound(0x08, start);
          if (state.cccdWithoutValue) return att(0x09, 2, le16(state.cccdHandle));
          return att(0x09, 4, le16(state.cccdHandle), le16(state.cccd));
        }
        if (state.characteristicsResponse !== undefined) return state.characteristicsResponse;
        if (start > 2) return notFound(0x08, start);
        return att(0x09, 7, le16(2), options.properties ?? 0x1a, le16(3), le16(0xfff1));
      }
      case 0x04:
        return notFound(0x04, pdu.readUInt16LE(1));
      case 0x1e:
        // Handle Value Confirmation: never answered (Vol 3 Part F §3.4.7.3).
        return undefined;
      case 0x0a:
        state.readRequests++;
        if (state.holdReads) {
          state.held.push(Buffer.from(pdu));
          return undefined;
        }
        if (state.readError !== undefined) {
          const code = state.readError;
          state.readError = undefined;
          return att(0x01, 0x0a, le16(pdu.readUInt16LE(1)), code);
        }
        return att(0x0b, state.value.subarray(0, state.mtu - 1));
      case 0x0c: {
        state.readBlobRequests++;
        const offset = state.blobIgnoresOffset ? 0 : pdu.readUInt16LE(3);
        if (offset > state.value.length) return att(0x01, 0x0c, le16(3), 0x07);
        return att(0x0d, state.value.subarray(offset, offset + state.mtu - 1));
      }
      case 0x12: {
        const handle = pdu.readUInt16LE(1);
        const code = handle === 4 ? state.cccdError : state.writeError;
        if (code !== undefined) {
          if (handle === 3) state.writeError = undefined;
          return att(0x01, 0x12, le16(handle), code);
        }
        if (handle === 4) state.cccd = pdu.readUInt16LE(3);
        else state.value = Buffer.from(pdu.subarray(3));
        return att(0x13);
      }
      case 0x16:
        if (pdu.readUInt16LE(3) === state.prepareError?.offset) {
          return att(0x01, 0x16, le16(3), state.prepareError.code);
        }
        prepared.push({ offset: pdu.readUInt16LE(3), data: Buffer.from(pdu.subarray(5)) });
        return att(0x17, pdu.subarray(1));
      case 0x18: {
        state.executeFlags.push(pdu[1]!);
        if (pdu[1] === 0x01 && state.executeError !== undefined) {
          const code = state.executeError;
          state.executeError = undefined;
          prepared = [];
          return att(0x01, 0x18, le16(3), code);
        }
        if (pdu[1] === 0x01) {
          const value = Buffer.alloc(Math.max(...prepared.map((p) => p.offset + p.data.length)));
          for (const p of prepared) p.data.copy(value, p.offset);
          state.value = value;
        }
        prepared = [];
        return att(0x19);
      }
      default:
        return pdu[0]! & 0x40 ? undefined : att(0x01, pdu[0]!, le16(0), 0x06);
    }
  };
  /** This peripheral's own Exchange MTU Request with Client Rx MTU `rx`, to send. */
  const exchangeMtu = (rx: number): Buffer => {
    state.ownRequestRx = rx;
    return att(0x02, le16(rx));
  };
  return { state, answer, exchangeMtu };
}

/**
 * `connected` for a test file: every link its tests open is closed after each test, in the
 * reverse order it was opened.
 */
export function closedAfterEach(): (
  server: ReturnType<typeof gattServer>,
) => ReturnType<typeof connected> {
  const closers: Closers = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  return (server) => connected(server, closers);
}

/** The gateway's central connected to a scripted peripheral answering with `server`. */
export async function connected(
  server: ReturnType<typeof gattServer>,
  closers: Closers,
): Promise<{
  clock: VirtualClock;
  link: CentralLink;
  /** Sends an ATT PDU from the peripheral on the connection. */
  send: (pdu: Buffer) => void;
  /** Sends an SMP PDU from the peripheral on the connection. */
  sendSmp: (pdu: Buffer) => void;
  /** Sends an LE signaling PDU from the peripheral, and the signaling PDUs it has received. */
  sendSignaling: (pdu: Buffer) => void;
  signaling: Buffer[];
  /** The peripheral's HCI events with this code (and LE subevent), oldest first. */
  events: (code: number, subevent?: number) => Buffer[];
  /** Answers the Read Requests held so far (`holdReads`). */
  release: () => void;
  /** Pairing Failed to a Pairing Request (the default), or Just Works. */
  pairing: PairingResponder;
}> {
  const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 5, 8) });
  const rng = new Rng("att-client");
  const radio = new EmulatedRadio(clock, rng);
  closers.push(() => radio.close());
  // Its host takes whole ATT PDUs (up to 517 octets) in one ACL packet each.
  const controller = new VirtualController({
    name: "peripheral",
    address: "c0:00:00:00:00:02",
    medium: radio.medium,
    rng: rng.fork("peripheral"),
    aclBufferLength: 1024,
  });
  closers.push(() => controller.close());
  radio.medium.move(controller, { x: 1, y: 0 });
  let handle: number | undefined;
  let initiator: Peer | undefined;
  const pairing = new PairingResponder(
    { type: 0, address: Buffer.from("0200000000c0", "hex") },
    () => initiator!,
  );
  const l2cap = (cid: number, pdu: Buffer): void =>
    peripheral.acl(handle!, 0b00, Buffer.concat([le16(pdu.length), le16(cid), pdu]));
  const send = (pdu: Buffer): void => l2cap(0x0004, pdu);
  const sendSmp = (pdu: Buffer): void => l2cap(0x0006, pdu);
  const sendSignaling = (pdu: Buffer): void => l2cap(0x0005, pdu);
  const signaling: Buffer[] = [];
  const peripheral: ScriptedHost = new ScriptedHost(controller, (packet) => {
    if (packet[0] === H4.EVENT && packet[1] === 0x3e && packet[3] === 0x01) {
      // LE Connection Complete: the central's address, which pairing confirms (§2.2.3).
      handle = packet.readUInt16LE(5) & 0x0fff;
      initiator = { type: packet[8]!, address: Buffer.from(packet.subarray(9, 15)) };
    }
    if (packet[0] === H4.EVENT && packet[1] === 0x3e && packet[3] === 0x05 && pairing.stk) {
      // LE Long Term Key Request: the STK pairing agreed on (Vol 3 Part H §2.4.4.1).
      const reply = Buffer.concat([packet.subarray(4, 6), pairing.stk]);
      peripheral.command(OP.LE_LTK_REQUEST_REPLY, reply);
    }
    if (packet[0] !== H4.ACL) return;
    if (packet.readUInt16LE(7) === 0x0005) {
      signaling.push(Buffer.from(packet.subarray(9)));
      return;
    }
    if (packet.readUInt16LE(7) === 0x0006) {
      const answer = pairing.answer(packet.subarray(9));
      if (answer !== undefined) sendSmp(answer);
      return;
    }
    if (packet.readUInt16LE(7) !== 0x0004) return;
    handle = packet.readUInt16LE(1) & 0x0fff;
    const reply = server.answer(packet.subarray(9));
    for (const pdu of server.state.outbox.splice(0)) send(pdu);
    if (reply !== undefined) send(reply);
  });
  peripheral.command(OP.LE_SET_ADVERTISING_PARAMETERS, advParams(50));
  peripheral.command(OP.LE_SET_ADVERTISING_DATA, dataParam(Buffer.from("020106", "hex")));
  peripheral.command(OP.LE_SET_ADVERTISING_ENABLE, Buffer.from([1]));

  const adapter = new HciAdapter(
    0,
    new DirectTransport(radio.controller("hub", { x: 0, y: 0 })),
    "hub",
  );
  closers.push(() => adapter.close());
  const central = await NobleCentral.open(() => new EmulatedHciSocket(adapter), clock);
  closers.push(() => central.quiesce());
  let seen: string | undefined;
  const stop = await central.startScan([], (adv) => {
    seen ??= adv.id;
  });
  await clock.run({ until: clock.now() + 2000 });
  await stop();
  expect(seen).toBeDefined();
  const connecting = central.connect(seen!);
  await clock.run({ until: clock.now() + 2000 });
  const link = await connecting;
  closers.push(async () => {
    if (!link.connected) return;
    const closed = link.disconnect();
    await clock.run({ until: clock.now() + 1000 });
    await closed;
  });
  // Settled within the run, or the check fails at once (noble left requests waiting for ever).
  let discovered: Map<string, string[]> | Error | undefined;
  link.discover().then(
    (services) => (discovered = services),
    (error: Error) => (discovered = error),
  );
  await clock.run({ until: clock.now() + 2000 });
  expect(discovered).toEqual(new Map([["FFF0", ["FFF1"]]]));
  const release = (): void => {
    const held = server.state.held.splice(0).length;
    for (let i = 0; i < held; i++)
      send(att(0x0b, server.state.value.subarray(0, server.state.mtu - 1)));
  };
  const events = (code: number, subevent?: number) => peripheral.events(code, subevent);
  return { clock, link, send, sendSmp, sendSignaling, signaling, events, release, pairing };
}

export const pattern = (length: number, seed: number): Buffer =>
  Buffer.from(Array.from({ length }, (_, i) => (i * 7 + seed) & 0xff));

/** The outcome of `promise` once the clock has run `ms`: its value, its error, or "pending". */
export async function settled<T>(
  clock: VirtualClock,
  promise: Promise<T>,
  ms = 2000,
): Promise<T | Error | "pending"> {
  let outcome: T | Error | "pending" = "pending";
  promise.then(
    (value) => (outcome = value),
    (error: Error) => (outcome = error),
  );
  await clock.run({ until: clock.now() + ms });
  return outcome;
}
