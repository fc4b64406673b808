import type { Clock } from "../../core/clock.ts";
import type { Rng } from "../../core/rng.ts";
import type { BdAddr } from "../hci/address.ts";
import {
  DEFAULT_EVENT_MASK,
  DEFAULT_LE_EVENT_MASK,
  EVT,
  H4,
  LL_DEFAULT_PAYLOAD,
  PB,
  STATUS,
} from "../hci/constants.ts";
import * as ev from "../hci/events.ts";
import type { Link, LinkPdu } from "../medium/link.ts";
import type { RadioMedium } from "../medium/radio-medium.ts";
import type { AdvertisingPdu, Station } from "../medium/station.ts";
import { readAcl } from "./acl.ts";
import {
  type AdvertisingState,
  type Initiating,
  newAdvertisingState,
  newScanState,
  type ScanState,
} from "./advertising.ts";
import * as AIR from "./advertising-channel.ts";
import { COMMANDS } from "./commands.ts";
import type { Connection } from "./connection.ts";
import * as LL from "./link-layer.ts";

export interface VirtualControllerOptions {
  /** For logs and captures, e.g. "gateway" or "bpm-1". */
  name: string;
  /** Public device address (Read BD_ADDR). */
  address: BdAddr;
  medium: RadioMedium;
  /** Seeded stream forked for this controller (advDelay, LE Rand). */
  rng: Rng;
  /** LE ACL Data Packet Length the controller takes from its host (LE Read Buffer Size). */
  aclBufferLength?: number;
  /** Total_Num_LE_ACL_Data_Packets. */
  aclBufferCount?: number;
}

/** HCI traffic in one direction, as a capture records it. */
export type Direction = "host-to-controller" | "controller-to-host";

export interface ControllerStats {
  commands: number;
  unknownCommands: number;
  invalidCommands: number;
  aclFromHost: number;
  /** ACL packets dropped: malformed, unknown handle, or over the buffer count. */
  aclDiscarded: number;
  bufferOverflows: number;
  /** Packets whose indicator is not a host-to-controller type. */
  badPackets: number;
}

/**
 * A Bluetooth LE controller in TypeScript, after Bumble's controller.py: it speaks exact HCI to
 * one host (noble, bleno, BlueZ, Bumble…) and exact timing-free Link Layer procedures to the
 * other controllers on a RadioMedium. Commands dispatch through one table (commands.ts); any
 * byte sequence from the host yields either the protocol's answer or a counted discard, never an
 * exception. This class holds the state and the host side (HCI commands, events, ACL flow
 * control); advertising-channel.ts runs advertising, scanning and initiating, link-layer.ts the
 * connections.
 */
export class VirtualController implements Station {
  readonly name: string;
  readonly addressType = 0;
  readonly medium: RadioMedium;
  readonly clock: Clock;
  readonly rng: Rng;
  readonly aclBufferLength: number;
  readonly aclBufferCount: number;
  address: BdAddr;
  randomAddress: BdAddr | undefined;
  eventMask = DEFAULT_EVENT_MASK;
  leEventMask = DEFAULT_LE_EVENT_MASK;
  leHostSupported = false;
  /** Largest ACL packet the host takes (Host Buffer Size); our own length until it says. */
  hostAclLength: number;
  freeBuffers: number;
  adv: AdvertisingState = newAdvertisingState();
  scan: ScanState = newScanState();
  initiating: Initiating | undefined;
  readonly connections = new Map<number, Connection>();
  readonly stats: ControllerStats = {
    commands: 0,
    unknownCommands: 0,
    invalidCommands: 0,
    aclFromHost: 0,
    aclDiscarded: 0,
    bufferOverflows: 0,
    badPackets: 0,
  };
  private host: ((packet: Buffer) => void) | undefined;
  private readonly taps = new Set<(direction: Direction, packet: Buffer) => void>();
  private powered = true;

  constructor(options: VirtualControllerOptions) {
    this.name = options.name;
    this.address = options.address;
    this.medium = options.medium;
    this.clock = options.medium.clock;
    this.rng = options.rng;
    this.aclBufferLength = options.aclBufferLength ?? LL_DEFAULT_PAYLOAD;
    this.aclBufferCount = options.aclBufferCount ?? 8;
    this.hostAclLength = this.aclBufferLength;
    this.freeBuffers = this.aclBufferCount;
    this.medium.join(this);
  }

  /** Connects the host side (one HCI transport at a time); returns the detach function. */
  attach(sink: (packet: Buffer) => void): () => void {
    this.host = sink;
    return () => {
      if (this.host === sink) this.host = undefined;
    };
  }

  /** Watches every packet in both directions (btsnoop). */
  tap(listener: (direction: Direction, packet: Buffer) => void): () => void {
    this.taps.add(listener);
    return () => this.taps.delete(listener);
  }

  /** One H4 packet from the host, indicator first. */
  receive(packet: Buffer): void {
    if (!this.powered) return;
    for (const tap of this.taps) tap("host-to-controller", packet);
    const indicator = packet[0];
    if (indicator === H4.COMMAND) this.command(packet);
    else if (indicator === H4.ACL) this.aclFromHost(packet);
    else this.stats.badPackets++;
  }

  /** Sends one H4 packet to the host. */
  toHost(packet: Buffer): void {
    for (const tap of this.taps) tap("controller-to-host", packet);
    this.host?.(packet);
  }

  /** Sends an event if the host's event masks let it through (Vol 4 Part E §7.3.1, §7.8.1). */
  event(packet: Buffer): void {
    const code = packet[1]!;
    const unmaskable =
      code === EVT.COMMAND_COMPLETE ||
      code === EVT.COMMAND_STATUS ||
      code === EVT.NUMBER_OF_COMPLETED_PACKETS;
    if (!unmaskable && ((this.eventMask >> BigInt(code - 1)) & 1n) === 0n) return;
    if (code === EVT.LE_META && ((this.leEventMask >> BigInt(packet[3]! - 1)) & 1n) === 0n) return;
    this.toHost(packet);
  }

  private command(packet: Buffer): void {
    this.stats.commands++;
    if (packet.length < 4) {
      // Too short to name a command: nothing to answer but the lost framing.
      this.stats.badPackets++;
      this.toHost(ev.hardwareError(0x00));
      return;
    }
    const op = packet.readUInt16LE(1);
    const declared = packet[3]!;
    const params = packet.subarray(4);
    const entry = COMMANDS.get(op);
    if (entry === undefined) {
      // Vol 1 Part F §2.1: an unsupported command gets Unknown HCI Command, in a Command Status
      // (Vol 4 Part E §4.5 allows it or a Command Complete of the status alone): its return
      // parameters are unknown, and Wireshark reads a status-only Command Complete of a known
      // command (LE Encrypt, say) as malformed.
      this.stats.unknownCommands++;
      this.toHost(ev.commandStatus(op, STATUS.UNKNOWN_COMMAND));
      return;
    }
    if (declared !== params.length || params.length !== entry.length) {
      this.stats.invalidCommands++;
      this.reply(op, entry.kind, STATUS.INVALID_PARAMETERS, entry.returnLength);
      return;
    }
    let outcome: ReturnType<typeof entry.run>;
    try {
      outcome = entry.run(this, params);
    } catch {
      // A handler that meets bytes it did not expect answers like any other bad parameters.
      this.stats.invalidCommands++;
      this.reply(op, entry.kind, STATUS.INVALID_PARAMETERS, entry.returnLength);
      return;
    }
    if (entry.kind === "status") {
      this.toHost(ev.commandStatus(op, outcome.status));
    } else {
      const ret = Buffer.alloc(1 + entry.returnLength);
      ret[0] = outcome.status;
      if (outcome.ret !== undefined) ret.set(outcome.ret.subarray(0, entry.returnLength), 1);
      this.toHost(ev.commandComplete(op, ret));
    }
    if (outcome.status === STATUS.SUCCESS) outcome.after?.();
  }

  private reply(
    op: number,
    kind: "complete" | "status",
    status: number,
    returnLength: number,
  ): void {
    if (kind === "status") this.toHost(ev.commandStatus(op, status));
    else {
      const ret = Buffer.alloc(1 + returnLength);
      ret[0] = status;
      this.toHost(ev.commandComplete(op, ret));
    }
  }

  // ---- ACL data (Vol 4 Part E §4.1, §5.4.2) ----

  private aclFromHost(packet: Buffer): void {
    this.stats.aclFromHost++;
    const acl = readAcl(packet);
    const conn = acl === undefined ? undefined : this.connections.get(acl.handle);
    if (acl === undefined || conn === undefined || acl.pb === 0b11 || acl.bc !== 0) {
      this.stats.aclDiscarded++;
      return;
    }
    if (this.freeBuffers === 0) {
      // The host sent more packets than LE Read Buffer Size allowed (§7.7.26).
      this.stats.bufferOverflows++;
      this.stats.aclDiscarded++;
      this.event(ev.dataBufferOverflow());
      return;
    }
    this.freeBuffers--;
    conn.inFlight++;
    // Re-fragment into LL Data PDUs of at most 27 octets (Vol 6 Part B §2.4.2.2).
    const llid: 1 | 2 = acl.pb === PB.CONTINUING ? 1 : 2;
    const data = Buffer.from(acl.data);
    const pieces = Math.max(1, Math.ceil(data.length / LL_DEFAULT_PAYLOAD));
    for (let i = 0; i < pieces; i++) {
      const bytes = data.subarray(i * LL_DEFAULT_PAYLOAD, (i + 1) * LL_DEFAULT_PAYLOAD);
      const last = i === pieces - 1;
      conn.link.send(
        this,
        { kind: "data", llid: i === 0 ? llid : 1, bytes },
        last ? () => this.completed(conn) : undefined,
      );
    }
  }

  private completed(conn: Connection): void {
    if (this.connections.get(conn.handle) !== conn) return;
    conn.inFlight--;
    this.freeBuffers++;
    this.event(ev.numberOfCompletedPackets([[conn.handle, 1]]));
  }

  // ---- Advertising and scanning (Vol 6 Part B §4.4): advertising-channel.ts ----

  startAdvertising(): void {
    AIR.startAdvertising(this);
  }

  stopAdvertising(): void {
    AIR.stopAdvertising(this);
  }

  ownAddress(ownAddressType: number): BdAddr {
    return (ownAddressType & 1) === 1 && this.randomAddress !== undefined
      ? this.randomAddress
      : this.address;
  }

  listening(): boolean {
    return this.scan.enabled || this.initiating !== undefined;
  }

  answerScanRequest(): Uint8Array | undefined {
    return AIR.answerScanRequest(this);
  }

  hearAdvertisement(pdu: AdvertisingPdu, from: Station, rssi: number): void {
    if (AIR.hearAdvertisement(this, pdu, from, rssi) && from instanceof VirtualController) {
      from.connectRequested();
    }
  }

  /** CONNECT_IND received: a connectable advertiser stops advertising (Vol 6 Part B §4.4.2). */
  connectRequested(): void {
    this.stopAdvertising();
  }

  // ---- Connections (Vol 6 Part B §4.5): link-layer.ts ----

  linkUp(link: Link): void {
    LL.linkUp(this, link);
  }

  linkReceive(link: Link, pdu: LinkPdu): void {
    LL.linkReceive(this, link, pdu);
  }

  linkDown(link: Link, reason: number): void {
    LL.linkDown(this, link, reason);
  }

  terminate(conn: Connection, reason: number): void {
    LL.terminate(this, conn, reason);
  }

  requestUpdate(conn: Connection, params: Link["params"]): void {
    LL.requestUpdate(this, conn, params);
  }

  answerEncryption(conn: Connection, key: Buffer): void {
    LL.answerEncryption(this, conn, key);
  }

  rejectEncryption(conn: Connection): void {
    LL.rejectEncryption(this, conn);
  }

  /** Handle counter for link-layer.ts: the next handle to try. */
  nextHandle = 0x0040;
  /** HCI Reset (Vol 4 Part E §7.3.2): back to defaults; links end for the peers. */
  reset(): void {
    this.stopAdvertising();
    const links = [...this.connections.values()].map((c) => c.link);
    this.connections.clear();
    for (const link of links) this.medium.dropLink(link, STATUS.CONNECTION_TIMEOUT);
    this.adv = newAdvertisingState();
    this.scan = newScanState();
    this.initiating = undefined;
    this.eventMask = DEFAULT_EVENT_MASK;
    this.leEventMask = DEFAULT_LE_EVENT_MASK;
    this.randomAddress = undefined;
    this.hostAclLength = this.aclBufferLength;
    this.freeBuffers = this.aclBufferCount;
  }

  /** Switches the controller off: it leaves the medium and stops every timer. */
  close(): void {
    this.powered = false;
    this.stopAdvertising();
    this.connections.clear();
    this.medium.leave(this);
    this.host = undefined;
    this.taps.clear();
  }
}
