import type { Direction } from "../controller/virtual-controller.ts";
import { EVT, H4, LE_EVT, OP } from "../hci/constants.ts";
import { FragmentGuard } from "../hci/fragment-guard.ts";
import { answersCommand } from "../hci/l2cap-guard.ts";
import type { EmulatedHciSocket } from "./emulated-socket.ts";
import { LeSignaling } from "./le-signaling.ts";
import {
  type LongTermKey,
  MGMT_OP_LOAD_LONG_TERM_KEYS,
  MGMT_STATUS,
  mgmtReply,
  readLongTermKeys,
  readMgmtCommand,
} from "./mgmt.ts";
import type { HciTransport } from "./transport.ts";

/**
 * What the Linux kernel is between a host stack and its controller, emulated on the host's side
 * of any transport: hciN with its raw sockets (each with its filter, and a copy of the commands
 * other sockets send), its user channel (exclusive, unfiltered) and the management channel. Like
 * the kernel it answers the controller's LE Long Term Key Request from the keys loaded through
 * mgmt (net/bluetooth/hci_event.c, hci_le_ltk_request_evt), so bleno's legacy pairing works.
 */
export class HciAdapter {
  private readonly sockets = new Set<EmulatedHciSocket>();
  private keys: LongTermKey[] = [];
  private closed = false;
  private readonly taps = new Set<(direction: Direction, packet: Buffer) => void>();
  /** Checks each L2CAP PDU from the air, whole, before a host stack reads it. */
  private readonly guard = new FragmentGuard();
  /** The kernel's answers on the LE signaling channel (le-signaling.ts). */
  private readonly signaling = new LeSignaling();
  readonly name: string;
  /** Unknown on this side of the transport until the host reads it; captures show zeros. */
  readonly address = "00:00:00:00:00:00";
  /** Exceptions thrown by a host while handling a packet: the host's bug, reported not thrown. */
  onHostError: (error: unknown) => void = () => {};

  constructor(
    readonly devId: number,
    private readonly transport: HciTransport,
    name = `hci${devId}`,
  ) {
    this.name = name;
    transport.setReceiver((packet) => this.fromController(packet));
    transport.setErrorHandler?.((error) => {
      for (const socket of this.sockets) socket.fail(error);
    });
  }

  get isUp(): boolean {
    return !this.closed;
  }

  add(socket: EmulatedHciSocket): void {
    this.sockets.add(socket);
  }

  remove(socket: EmulatedHciSocket): void {
    this.sockets.delete(socket);
  }

  private userChannel(): EmulatedHciSocket | undefined {
    for (const s of this.sockets) if (s.channel === "user") return s;
    return undefined;
  }

  /** A packet a host wrote on an HCI (raw or user) socket. */
  fromHost(packet: Buffer, from: EmulatedHciSocket): void {
    if (this.closed || answersCommand(packet)) return;
    if (packet[0] === H4.COMMAND && from.channel === "raw") {
      for (const s of this.sockets)
        if (s !== from && s.channel === "raw") s.deliverFiltered(packet);
    }
    this.toController(packet);
  }

  /** Watches the traffic on this side of the transport (btsnoop of a tcp:// host). */
  tap(listener: (direction: Direction, packet: Buffer) => void): () => void {
    this.taps.add(listener);
    return () => this.taps.delete(listener);
  }

  private toController(packet: Buffer): void {
    for (const t of this.taps) t("host-to-controller", packet);
    this.transport.send(packet);
  }

  /** A management command written on a control socket. */
  mgmt(packet: Buffer, from: EmulatedHciSocket): void {
    const command = readMgmtCommand(packet);
    if (command === undefined) return;
    let status: number = MGMT_STATUS.UNKNOWN_COMMAND;
    if (command.opcode === MGMT_OP_LOAD_LONG_TERM_KEYS) {
      const keys = readLongTermKeys(command.params);
      if (keys === undefined) status = MGMT_STATUS.INVALID_PARAMETERS;
      else {
        this.keys = keys;
        status = MGMT_STATUS.SUCCESS;
      }
    }
    from.deliver(mgmtReply(command, status));
  }

  private fromController(packet: Buffer): void {
    for (const t of this.taps) t("controller-to-host", packet);
    const { deliver, reply } = this.guard.take(packet);
    if (reply !== undefined) this.toController(reply);
    for (const p of deliver) {
      this.toHosts(p);
      // Not on the user channel: there the host alone has the controller, as on Linux.
      if (this.userChannel() === undefined) {
        for (const answer of this.signaling.answer(p)) this.toController(answer);
      }
    }
  }

  private toHosts(packet: Buffer): void {
    const user = this.userChannel();
    if (user !== undefined) {
      user.deliver(packet);
      return;
    }
    for (const s of this.sockets) if (s.channel === "raw") s.deliverFiltered(packet);
    if (
      packet[0] === H4.EVENT &&
      packet[1] === EVT.LE_META &&
      packet[3] === LE_EVT.LONG_TERM_KEY_REQUEST
    ) {
      this.answerLtkRequest(packet);
    }
  }

  /** LE Long Term Key Request (Vol 4 Part E §7.7.65.5): reply from the loaded keys. */
  private answerLtkRequest(packet: Buffer): void {
    if (packet.length < 16) return;
    const handle = packet.readUInt16LE(4);
    const random = packet.subarray(6, 14);
    const ediv = packet.readUInt16LE(14);
    const match = this.keys.find((k) => k.ediv === ediv && k.random.equals(random));
    if (match !== undefined) {
      const cmd = Buffer.alloc(22);
      cmd[0] = H4.COMMAND;
      cmd.writeUInt16LE(OP.LE_LTK_REQUEST_REPLY, 1);
      cmd[3] = 18;
      cmd.writeUInt16LE(handle, 4);
      match.key.copy(cmd, 6);
      this.toController(cmd);
    } else {
      const cmd = Buffer.alloc(6);
      cmd[0] = H4.COMMAND;
      cmd.writeUInt16LE(OP.LE_LTK_REQUEST_NEGATIVE_REPLY, 1);
      cmd[3] = 2;
      cmd.writeUInt16LE(handle, 4);
      this.toController(cmd);
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.transport.close();
    for (const s of this.sockets) s.stop();
    this.sockets.clear();
  }
}
