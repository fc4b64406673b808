import type { Clock } from "../../core/clock.ts";
import type { Rng } from "../../core/rng.ts";
import type { BdAddr } from "../hci/address.ts";
import {
  DEFAULT_EVENT_MASK,
  DEFAULT_LE_EVENT_MASK,
  EVT,
  H4,
  LE_EVT,
  LL_DEFAULT_PAYLOAD,
  PB,
  STATUS,
} from "../hci/constants.ts";
import * as ev from "../hci/events.ts";
import type { Link, LinkPdu } from "../medium/link.ts";
import type { RadioMedium } from "../medium/radio-medium.ts";
import type { AdvertisingPdu, Station } from "../medium/station.ts";
import { fragmentToHost, readAcl } from "./acl.ts";
import {
  type AdvertisingState,
  type Initiating,
  isConnectable,
  isScannable,
  newAdvertisingState,
  newScanState,
  reportTypeOf,
  type ScanState,
} from "./advertising.ts";
import { COMMANDS } from "./commands.ts";
import { Connection } from "./connection.ts";
import { LE_FEATURES } from "./identity.ts";

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

/** Connection handles 0x0000–0x0EFF (Vol 4 Part E §5.4.2). */
const MAX_HANDLE = 0x0eff;
/** Connection update takes effect at an instant at least 6 connection events ahead (Vol 6 Part B §5.1.1). */
const UPDATE_INSTANT_EVENTS = 6;
/** advDelay: 0–10 ms added to every advertising interval (Vol 6 Part B §4.4.2.2.1). */
const ADV_DELAY_MAX_MS = 10;

/**
 * A Bluetooth LE controller in TypeScript, after Bumble's controller.py: it speaks exact HCI to
 * one host (noble, bleno, BlueZ, Bumble…) and exact timing-free Link Layer procedures to the
 * other controllers on a RadioMedium. Commands dispatch through one table (commands.ts); any
 * byte sequence from the host yields either the protocol's answer or a counted discard, never an
 * exception.
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
  private nextHandle = 0x0040;
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
      // Vol 1 Part F §2.1: an unsupported command gets Unknown HCI Command.
      this.stats.unknownCommands++;
      this.toHost(ev.commandComplete(op, Buffer.from([STATUS.UNKNOWN_COMMAND])));
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

  // ---- Advertising and scanning (Vol 6 Part B §4.4) ----

  startAdvertising(): void {
    this.adv.enabled = true;
    this.scheduleAdvertisingEvent(this.rng.uniform(0, ADV_DELAY_MAX_MS));
  }

  stopAdvertising(): void {
    this.adv.enabled = false;
    if (this.adv.timer !== undefined) this.clock.clearTimeout(this.adv.timer);
    this.adv.timer = undefined;
  }

  private scheduleAdvertisingEvent(delayMs: number): void {
    this.adv.timer = this.clock.setTimeout(() => {
      this.adv.timer = undefined;
      if (!this.adv.enabled) return;
      const p = this.adv.params;
      const pdu: AdvertisingPdu = {
        reportType: reportTypeOf(p.type),
        address: this.ownAddress(p.ownAddressType),
        addressType: p.ownAddressType & 1,
        data: this.adv.data,
        ...(reportTypeOf(p.type) === 0x01 ? { target: p.peerAddress } : {}),
      };
      this.medium.advertise(this, pdu);
      if (this.adv.enabled) {
        this.scheduleAdvertisingEvent(
          p.intervalMin * 0.625 + this.rng.uniform(0, ADV_DELAY_MAX_MS),
        );
      }
    }, delayMs);
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
    return this.adv.enabled && isScannable(reportTypeOf(this.adv.params.type))
      ? this.adv.scanResponse
      : undefined;
  }

  hearAdvertisement(pdu: AdvertisingPdu, from: Station, rssi: number): void {
    const init = this.initiating;
    if (
      init !== undefined &&
      pdu.address === init.peerAddress &&
      isConnectable(pdu.reportType) &&
      (pdu.target === undefined || pdu.target === this.address)
    ) {
      const link = this.medium.connect(this, from, {
        interval: init.interval,
        latency: init.latency,
        timeout: init.timeout,
      });
      if (link !== undefined) {
        this.initiating = undefined;
        if (from instanceof VirtualController) from.connectRequested();
      }
      return;
    }
    if (!this.scan.enabled) return;
    this.report(pdu.reportType, pdu.address, pdu.addressType, pdu.data, rssi);
    if (this.scan.active && isScannable(pdu.reportType)) {
      const answer = this.medium.scanRequest(this, from);
      if (answer !== undefined)
        this.report(0x04, pdu.address, pdu.addressType, answer.data, answer.rssi);
    }
  }

  private report(
    type: number,
    address: BdAddr,
    addressType: number,
    data: Uint8Array,
    rssi: number,
  ): void {
    if (this.scan.filterDuplicates) {
      const key = `${type}/${address}`;
      if (this.scan.seen.has(key)) return;
      this.scan.seen.add(key);
    }
    this.event(ev.leAdvertisingReport({ eventType: type, addressType, address, data, rssi }));
  }

  /** CONNECT_IND received: a connectable advertiser stops advertising (Vol 6 Part B §4.4.2). */
  connectRequested(): void {
    this.stopAdvertising();
  }

  // ---- Connections (Vol 6 Part B §4.5) ----

  allocateHandle(): number {
    for (let i = 0; i <= MAX_HANDLE; i++) {
      const handle = this.nextHandle;
      this.nextHandle = this.nextHandle >= MAX_HANDLE ? 0x0001 : this.nextHandle + 1;
      if (!this.connections.has(handle)) return handle;
    }
    return -1;
  }

  connectionOf(link: Link): Connection | undefined {
    for (const conn of this.connections.values()) if (conn.link === link) return conn;
    return undefined;
  }

  linkUp(link: Link): void {
    const central = link.central === this;
    const peer = link.peerOf(this);
    const handle = this.allocateHandle();
    if (handle < 0) {
      this.medium.release(link);
      return;
    }
    const conn = new Connection(handle, link, central ? 0 : 1, peer.address, peer.addressType);
    this.connections.set(handle, conn);
    this.event(
      ev.leConnectionComplete({
        status: STATUS.SUCCESS,
        handle,
        role: conn.role,
        peerAddressType: peer.addressType,
        peerAddress: peer.address,
        interval: link.params.interval,
        latency: link.params.latency,
        supervisionTimeout: link.params.timeout,
        centralClockAccuracy: 0x00,
      }),
    );
  }

  linkReceive(link: Link, pdu: LinkPdu): void {
    const conn = this.connectionOf(link);
    if (conn === undefined) return;
    switch (pdu.kind) {
      case "data": {
        const whole = conn.rx.push(pdu.llid, pdu.bytes);
        if (whole !== undefined)
          for (const p of fragmentToHost(conn.handle, whole, this.hostAclLength)) this.toHost(p);
        return;
      }
      case "terminate":
        this.closeConnection(conn, pdu.reason);
        return;
      case "enc_req":
        conn.pendingEncryption = { random: pdu.random, ediv: pdu.ediv, key: pdu.key };
        if (((this.leEventMask >> BigInt(LE_EVT.LONG_TERM_KEY_REQUEST - 1)) & 1n) === 0n) {
          this.rejectEncryption(conn);
          return;
        }
        this.event(ev.leLongTermKeyRequest(conn.handle, pdu.random, pdu.ediv));
        return;
      case "enc_rsp":
        conn.encrypted = true;
        this.event(ev.encryptionChange(STATUS.SUCCESS, conn.handle, true));
        return;
      case "enc_reject":
        this.event(ev.encryptionChange(pdu.error, conn.handle, false));
        return;
      case "mic_failure":
        return;
      case "conn_update":
        this.applyUpdate(conn, pdu.params);
        return;
      case "feature_req":
        link.send(this, { kind: "feature_rsp", features: LE_FEATURES });
        return;
      case "feature_rsp":
        this.event(ev.leReadRemoteFeaturesComplete(STATUS.SUCCESS, conn.handle, pdu.features));
        return;
    }
  }

  linkDown(link: Link, reason: number): void {
    const conn = this.connectionOf(link);
    if (conn !== undefined)
      this.closeConnection(conn, conn.terminating ? STATUS.LOCAL_HOST_TERMINATED : reason);
  }

  /** Forgets the connection; the host's unacknowledged packets count as flushed (§7.7.5). */
  closeConnection(conn: Connection, reason: number): void {
    if (this.connections.get(conn.handle) !== conn) return;
    this.connections.delete(conn.handle);
    this.freeBuffers += conn.inFlight;
    conn.inFlight = 0;
    this.event(ev.disconnectionComplete(STATUS.SUCCESS, conn.handle, reason));
  }

  /** Host Disconnect: LL_TERMINATE_IND, then Disconnection Complete on both sides (Vol 6 Part B §5.1.3). */
  terminate(conn: Connection, reason: number): void {
    conn.terminating = true;
    conn.link.send(this, { kind: "terminate", reason }, () => {
      this.closeConnection(conn, STATUS.LOCAL_HOST_TERMINATED);
      this.medium.release(conn.link);
    });
  }

  /** LE Connection Update: both hosts hear of it at the instant (Vol 6 Part B §5.1.1). */
  requestUpdate(conn: Connection, params: Link["params"]): void {
    conn.link.send(this, { kind: "conn_update", params });
    this.applyUpdate(conn, params);
  }

  private applyUpdate(conn: Connection, params: Link["params"]): void {
    const delay = UPDATE_INSTANT_EVENTS * conn.link.intervalMs();
    this.clock.setTimeout(() => {
      if (this.connections.get(conn.handle) !== conn) return;
      conn.link.params = params;
      this.event(
        ev.leConnectionUpdateComplete(
          STATUS.SUCCESS,
          conn.handle,
          params.interval,
          params.latency,
          params.timeout,
        ),
      );
    }, delay);
  }

  /** Peripheral host's LTK: equal keys encrypt; unequal ones fail the MIC check (Vol 6 Part B §5.1.3.1). */
  answerEncryption(conn: Connection, key: Buffer): void {
    const pending = conn.pendingEncryption;
    conn.pendingEncryption = undefined;
    if (pending === undefined) return;
    if (pending.key.equals(key)) {
      conn.encrypted = true;
      conn.link.send(this, { kind: "enc_rsp", ok: true });
      this.event(ev.encryptionChange(STATUS.SUCCESS, conn.handle, true));
    } else {
      // Each side derives a different session key: the first encrypted PDU fails its MIC.
      this.medium.dropLink(conn.link, STATUS_MIC_FAILURE);
    }
  }

  /** No key: LL_REJECT_EXT_IND with PIN or Key Missing (Vol 6 Part B §5.1.3.1). */
  rejectEncryption(conn: Connection): void {
    conn.pendingEncryption = undefined;
    conn.link.send(this, { kind: "enc_reject", error: STATUS.PIN_OR_KEY_MISSING });
  }

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

/** Connection Terminated due to MIC Failure (Vol 1 Part F §1.3). */
const STATUS_MIC_FAILURE = 0x3d;
