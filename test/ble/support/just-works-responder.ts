/**
 * The responder's side of LE legacy pairing, Just Works (Vol 3 Part H §2.3.5.2, §2.3.5.5), for a
 * scripted peripheral: Pairing Response, Confirm and Random, and the STK its host gives the
 * controller at the LE Long Term Key Request. Or, with `refuse`, Pairing Failed (Pairing Not
 * Supported) to any Pairing Request.
 */
import { createCipheriv } from "node:crypto";

/** The security function e: AES-128 over octets sent least significant first (§2.2.1). */
function e(key: Buffer, data: Buffer): Buffer {
  const cipher = createCipheriv("aes-128-ecb", Buffer.from(key).reverse(), null);
  cipher.setAutoPadding(false);
  return Buffer.concat([cipher.update(Buffer.from(data).reverse()), cipher.final()]).reverse();
}

const xor = (a: Buffer, b: Buffer): Buffer => Buffer.from(a.map((x, i) => x ^ b[i]!));

/** The confirm value function c1 (§2.2.3); addresses and types as SMP sends them. */
export function c1(
  k: Buffer,
  r: Buffer,
  pres: Buffer,
  preq: Buffer,
  initiator: Peer,
  responder: Peer,
) {
  const p1 = Buffer.concat([Buffer.from([initiator.type, responder.type]), preq, pres]);
  const p2 = Buffer.concat([responder.address, initiator.address, Buffer.alloc(4)]);
  return e(k, xor(e(k, xor(r, p1)), p2));
}

/** The key generation function s1 (§2.2.4): STK from Srand and Mrand. */
export const s1 = (k: Buffer, r1: Buffer, r2: Buffer): Buffer =>
  e(k, Buffer.concat([r2.subarray(0, 8), r1.subarray(0, 8)]));

/** An address type (0 public, 1 random) and its 6 octets, least significant first. */
export interface Peer {
  readonly type: number;
  readonly address: Buffer;
}

const PAIRING_REQUEST = 0x01;
const PAIRING_CONFIRM = 0x03;
const PAIRING_RANDOM = 0x04;
const PAIRING_FAILED = 0x05;
const PAIRING_NOT_SUPPORTED = 0x05;
/** Just Works: TK zero (§2.3.5.2). */
export const TK = Buffer.alloc(16);

export class PairingResponder {
  pairingRequests = 0;
  /** The STK once pairing has come through Pairing Random. */
  stk: Buffer | undefined;
  /**
   * `wrong-random`: Just Works, but its Pairing Random does not match its Pairing Confirm.
   * `silent`: takes every SMP PDU and answers none (a responder that stalls, §3.4).
   * `held`: Just Works, its answers kept in `held` for the test to send when it will.
   */
  mode: "refuse" | "just-works" | "wrong-random" | "silent" | "held" = "refuse";
  /** In `held` mode, the answers not sent yet, in order. */
  readonly held: Buffer[] = [];
  /** Its Max Encryption Key Size (7–16): the STK keeps that many octets (§2.3.4). */
  keySize = 16;
  /**
   * Its Responder Key Distribution (§3.5.2): 0x01 offers EncKey, which it then owes once the
   * link is encrypted (Encryption Information, Master Identification: the test sends them).
   */
  responderKeys = 0x00;
  /** Every SMP PDU the initiator sent, in order. */
  readonly received: Buffer[] = [];
  private preq: Buffer | undefined;
  private mconfirm: Buffer | undefined;
  /** This side's random value: fixed, the test's runs alike. */
  private readonly srand = Buffer.from("00112233445566778899aabbccddeeff", "hex");
  /** NoInputNoOutput, no OOB, bonding, 16-octet keys, no keys distributed. */
  private readonly pres = Buffer.from([0x02, 0x03, 0x00, 0x01, 0x10, 0x00, 0x00]);

  constructor(
    private readonly responder: Peer,
    private readonly initiator: () => Peer,
  ) {}

  /** The SMP PDU to answer `pdu` with, if any. */
  answer(pdu: Buffer): Buffer | undefined {
    this.received.push(Buffer.from(pdu));
    if (pdu[0] === PAIRING_REQUEST) this.pairingRequests++;
    if (this.mode === "silent") return undefined;
    const answer = this.justWorks(pdu);
    if (this.mode !== "held" || answer === undefined) return answer;
    this.held.push(answer);
    return undefined;
  }

  private justWorks(pdu: Buffer): Buffer | undefined {
    switch (pdu[0]) {
      case PAIRING_REQUEST:
        if (this.mode === "refuse") return Buffer.from([PAIRING_FAILED, PAIRING_NOT_SUPPORTED]);
        this.preq = Buffer.from(pdu);
        this.pres[4] = this.keySize;
        this.pres[6] = this.responderKeys & pdu[6]!;
        return this.pres;
      case PAIRING_CONFIRM:
        this.mconfirm = Buffer.from(pdu.subarray(1));
        return Buffer.concat([Buffer.from([PAIRING_CONFIRM]), this.confirm(this.srand)]);
      case PAIRING_RANDOM: {
        const mrand = Buffer.from(pdu.subarray(1));
        if (!this.confirm(mrand).equals(this.mconfirm!)) {
          return Buffer.from([PAIRING_FAILED, 0x04]); // Confirm Value Failed
        }
        if (this.mode === "wrong-random") {
          return Buffer.concat([Buffer.from([PAIRING_RANDOM]), Buffer.alloc(16, 0x5a)]);
        }
        // The agreed key size is the lesser Max Encryption Key Size; the octets above it are 0.
        this.stk = s1(TK, this.srand, mrand).fill(0, Math.min(this.keySize, this.preq![4]!));
        return Buffer.concat([Buffer.from([PAIRING_RANDOM]), this.srand]);
      }
      default:
        return undefined;
    }
  }

  private confirm(random: Buffer): Buffer {
    return c1(TK, random, this.pres, this.preq!, this.initiator(), this.responder);
  }
}
