import { EVT, H4 } from "./constants.ts";
import { guardFromAir } from "./l2cap-guard.ts";

/** ACL Packet_Boundary_Flag from the controller (Vol 4 Part E §5.4.2). */
const PB_START = 0b10;
const PB_CONTINUING = 0b01;

/** A PDU's fragments held until the Basic L2CAP header's length is reached. */
interface Held {
  readonly fragments: Buffer[];
  readonly header: number;
  have: number;
  readonly total: number;
}

/** What reaches the host now, and what is answered on the controller for it. */
export interface GuardOutcome {
  readonly deliver: Buffer[];
  readonly reply: Buffer | undefined;
}

/**
 * guardFromAir for every L2CAP PDU, fragmented or not. A PDU longer than the host's ACL packets
 * (27 octets unless it said otherwise) comes in several; checked only on its first fragment, a
 * malformed one slipped through whole to noble or bleno (a Read By Type Response with an entry
 * Length of 0 hung noble). The fragments are held per connection until the length in the Basic
 * L2CAP header is reached (Vol 3 Part A §3.1, §7.2), then the PDU is checked whole: its fragments
 * reach the host as they came, or it is answered as a one-fragment PDU would be. Fragments that
 * make no PDU (a continuation with nothing started, one that overruns the length, a start while
 * one is held) pass untouched, for the host's own reassembly to discard.
 */
export class FragmentGuard {
  private readonly held = new Map<number, Held>();

  /** `kernelSignaling`: whether a kernel answers LE signaling now (guardFromAir). */
  constructor(private readonly kernelSignaling: () => boolean = () => false) {}

  take(packet: Buffer): GuardOutcome {
    if (packet[0] === H4.EVENT && packet[1] === EVT.DISCONNECTION_COMPLETE && packet.length >= 6) {
      return pass([...this.release(packet.readUInt16LE(4) & 0x0fff), packet]);
    }
    if (packet[0] !== H4.ACL || packet.length < 5 || packet.readUInt16LE(3) !== packet.length - 5) {
      return pass([packet]);
    }
    const header = packet.readUInt16LE(1);
    const handle = header & 0x0fff;
    const boundary = header >> 12;
    if (boundary === PB_CONTINUING) return this.continuing(handle, packet);
    const earlier = this.release(handle);
    if (boundary !== PB_START || packet.length < 9) return pass([...earlier, packet]);
    const total = 4 + packet.readUInt16LE(5);
    const have = packet.length - 5;
    if (have >= total) return verdict(earlier, [packet], packet, this.kernelSignaling());
    this.held.set(handle, { fragments: [packet], header, have, total });
    return pass(earlier);
  }

  private continuing(handle: number, packet: Buffer): GuardOutcome {
    const held = this.held.get(handle);
    if (held === undefined) return pass([packet]);
    held.fragments.push(packet);
    held.have += packet.length - 5;
    if (held.have < held.total) return pass([]);
    this.held.delete(handle);
    if (held.have > held.total) return pass(held.fragments);
    const whole = Buffer.concat([
      Buffer.from([
        H4.ACL,
        held.header & 0xff,
        held.header >> 8,
        held.total & 0xff,
        held.total >> 8,
      ]),
      ...held.fragments.map((f) => f.subarray(5)),
    ]);
    return verdict([], held.fragments, whole, this.kernelSignaling());
  }

  /** The fragments held for a connection, handed on as they are. */
  private release(handle: number): Buffer[] {
    const held = this.held.get(handle);
    this.held.delete(handle);
    return held?.fragments ?? [];
  }
}

const pass = (deliver: Buffer[]): GuardOutcome => ({ deliver, reply: undefined });

function verdict(
  earlier: Buffer[],
  fragments: Buffer[],
  whole: Buffer,
  kernelSignaling: boolean,
): GuardOutcome {
  const checked = guardFromAir(whole, kernelSignaling);
  return checked.deliver
    ? pass([...earlier, ...fragments])
    : { deliver: earlier, reply: checked.reply };
}
