import { validConnectionParams } from "../controller/le-params.ts";
import { EVT, H4, LE_EVT, OP } from "../hci/constants.ts";
import { l2capPacket } from "../hci/l2cap-guard.ts";

/** LE signaling channel and the codes answered here (Vol 3 Part A §4). */
const SIGNALING_CID = 0x0005;
const COMMAND_REJECT = 0x01;
const CONNECTION_PARAMETER_UPDATE_REQUEST = 0x12;
const CONNECTION_PARAMETER_UPDATE_RESPONSE = 0x13;
/** A whole request in one start fragment: ACL header, L2CAP header, 12 octets of signaling. */
const UPDATE_REQUEST_PACKET = 1 + 4 + 4 + 12;
const PB_START = 0b10;
const ROLE_CENTRAL = 0x00;
const ACCEPTED = 0x0000;
const REJECTED = 0x0001;

/**
 * What the Linux kernel answers on the LE signaling channel of a raw-mode host, which noble
 * leaves to it on Linux (lib/hci-socket/signaling.js answers only off Linux or on the user
 * channel): a peripheral's Connection Parameter Update Request (Vol 3 Part A §4.20). As
 * net/bluetooth/l2cap_core.c (l2cap_conn_param_update_req), the central answers Accepted and
 * sends LE Connection Update with the parameters (Vol 4 Part E §7.8.18), or Rejected when they
 * are out of range (hci_check_conn_params, the rules LE Connection Update takes); a peripheral,
 * which takes no such request, answers Command Reject "not understood". Nothing answered it on
 * the emulated path: the peripheral waited out its 30-second RTX timer. Roles are learnt from
 * the LE Connection Complete events the controller sends.
 */
export class LeSignaling {
  private readonly roles = new Map<number, number>();

  /** Watches a packet from the controller; returns the packets to send back to it, if any. */
  answer(packet: Buffer): Buffer[] {
    if (packet[0] === H4.EVENT) {
      this.track(packet);
      return [];
    }
    if (
      packet[0] !== H4.ACL ||
      packet.length !== UPDATE_REQUEST_PACKET ||
      packet.readUInt16LE(1) >> 12 !== PB_START ||
      packet.readUInt16LE(7) !== SIGNALING_CID ||
      packet[9] !== CONNECTION_PARAMETER_UPDATE_REQUEST ||
      packet.readUInt16LE(11) !== 8
    ) {
      return [];
    }
    const handle = packet.readUInt16LE(1) & 0x0fff;
    const identifier = packet[10]!;
    if (this.roles.get(handle) !== ROLE_CENTRAL) {
      return [l2capPacket(handle, SIGNALING_CID, [COMMAND_REJECT, identifier, 2, 0, 0, 0])];
    }
    const params = packet.subarray(13, 21);
    const [min, max, latency, timeout] = [0, 2, 4, 6].map((at) => params.readUInt16LE(at));
    const accepted = validConnectionParams(min!, max!, latency!, timeout!);
    const result = accepted ? ACCEPTED : REJECTED;
    const response = l2capPacket(handle, SIGNALING_CID, [
      CONNECTION_PARAMETER_UPDATE_RESPONSE,
      identifier,
      2,
      0,
      result & 0xff,
      result >> 8,
    ]);
    if (!accepted) return [response];
    // Handle, the four parameters, Min/Max CE Length 0 (as hci_le_conn_update sends them).
    const command = Buffer.alloc(4 + 14);
    command[0] = H4.COMMAND;
    command.writeUInt16LE(OP.LE_CONNECTION_UPDATE, 1);
    command[3] = 14;
    command.writeUInt16LE(handle, 4);
    params.copy(command, 6);
    return [response, command];
  }

  /** LE Connection Complete gives a handle its role; Disconnection Complete ends it. */
  private track(event: Buffer): void {
    if (event[1] === EVT.LE_META && event[3] === LE_EVT.CONNECTION_COMPLETE && event.length >= 8) {
      if (event[4] === 0) this.roles.set(event.readUInt16LE(5) & 0x0fff, event[7]!);
    } else if (event[1] === EVT.DISCONNECTION_COMPLETE && event.length >= 6) {
      this.roles.delete(event.readUInt16LE(4) & 0x0fff);
    }
  }
}
