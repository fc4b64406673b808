/**
 * Pairing as noble's GATT client starts it, with what noble leaves out (lib/hci-socket/gatt.js,
 * smp.js): noble pairs (LE legacy, Just Works) when a request is answered Insufficient
 * Authentication, Authorization or Encryption, and sends that request again once the link is
 * encrypted.
 */
import { createRequire } from "node:module";
import { withReason } from "./att-errors.ts";
import type { NobleGatt } from "./noble-gatt.ts";
import { keysOwed, takeKey } from "./smp-key-distribution.ts";
import {
  restartSmpTimer,
  SMP_TIMEOUT_REASON,
  smpTimedOut,
  stopSmpTimer,
  type TimedSmp,
} from "./smp-timer.ts";

const require = createRequire(import.meta.url);
const ERROR_RESPONSE = 0x01;
const INSUFFICIENT_AUTHENTICATION = 0x05;
const INSUFFICIENT_AUTHORIZATION = 0x08;
const INSUFFICIENT_ENCRYPTION = 0x0f;
const SMP_CID = 0x0006;
const SECURITY_REQUEST = 0x0b;
const PAIRING_CONFIRM = 0x03;
const PAIRING_RANDOM = 0x04;
const PAIRING_FAILED = 0x05;
const CONFIRM_VALUE_FAILED = 0x04;

/** The Error Response that started pairing, by connection, until the link is encrypted or not. */
const awaitingPairing = new WeakMap<NobleGatt, Buffer>();
/** The SMP sides (one per connection) whose Pairing Request is out, until pairing ends. */
const pairing = new WeakSet<NobleSmp>();
/** The SMP sides of links encrypted by a pairing. */
const encrypted = new WeakSet<NobleSmp>();
/** The keys each SMP side's responder still owes once encrypted (smp-key-distribution.ts). */
const distributing = new WeakMap<NobleSmp, number[]>();

/** noble's SMP side of one connection (lib/hci-socket/smp.js), as far as it is used here. */
interface NobleSmp extends TimedSmp {
  /** noble's Pairing Request and the peripheral's Pairing Response (octet 4: Max Encryption Key Size). */
  readonly _preq?: Buffer;
  readonly _pres?: Buffer;
  onAclStreamData(cid: number, data: Buffer): void;
  onAclStreamEnd(): void;
  sendPairingRequest(): void;
  write(data: Buffer): void;
  emit(event: string, ...args: unknown[]): boolean;
}

/** noble's GATT client with its connection's SMP side (lib/hci-socket/acl-stream.js). */
type PairingGatt = NobleGatt & { readonly _aclStream?: { readonly _smp?: NobleSmp } };

const smpOf = (gatt: NobleGatt): NobleSmp | undefined => (gatt as PairingGatt)._aclStream?._smp;

/**
 * Encryption has started (`encrypt`) or pairing failed. Failed, pairing is over and its timer
 * stops. Encrypted, it is over only once the responder has sent the keys both sides agreed on
 * (§3.6.1): until then its timer runs on (§3.4), stopped by the last key (see onAclStreamData).
 * Either way a later pairing may start.
 */
function pairingEnded(gatt: NobleGatt, encrypt: boolean): void {
  const smp = smpOf(gatt);
  if (smp === undefined) return;
  const ran = pairing.delete(smp);
  distributing.delete(smp);
  if (encrypt) encrypted.add(smp);
  const owed = encrypt && ran ? keysOwed(smp._preq, smp._pres) : [];
  if (owed.length > 0) distributing.set(smp, owed);
  else stopSmpTimer(smp);
}

/** The refused request's Error Response, naming the SMP timeout once the link's SMP timed out. */
function refusalOf(gatt: NobleGatt, refusal: Buffer): Buffer {
  const smp = smpOf(gatt);
  return smp !== undefined && smpTimedOut(smp) ? withReason(refusal, SMP_TIMEOUT_REASON) : refusal;
}

/** Whether `data` refuses the request awaiting its response for want of security. */
function refusedForSecurity(gatt: NobleGatt, data: Buffer): boolean {
  const code = data[4];
  return (
    data[0] === ERROR_RESPONSE &&
    gatt._currentCommand !== null &&
    (code === INSUFFICIENT_AUTHENTICATION ||
      code === INSUFFICIENT_AUTHORIZATION ||
      code === INSUFFICIENT_ENCRYPTION)
  );
}

/**
 * The Error Response a request refused for want of security completes with at once, naming the
 * SMP timeout, once the link's SMP has timed out (no pairing can lift the refusal, §3.4); also
 * on a link encrypted before its key distribution timed out, where noble hands the refusal on
 * as it is and the cause would go unsaid. Undefined otherwise: noble goes on as noble does.
 */
export function standingRefusal(gatt: NobleGatt, data: Buffer): Buffer | undefined {
  const smp = smpOf(gatt);
  if (smp === undefined || !smpTimedOut(smp) || !refusedForSecurity(gatt, data)) return undefined;
  return withReason(data, SMP_TIMEOUT_REASON);
}

/** Notes an ATT PDU noble will answer by pairing (as its onAclStreamData tests it). */
export function noteRefusal(gatt: NobleGatt, data: Buffer): void {
  if (gatt._security !== "medium" && refusedForSecurity(gatt, data)) {
    awaitingPairing.set(gatt, data);
  }
}

/**
 * - When pairing fails (the peripheral's Pairing Failed, Vol 3 Part H §3.5.5) or encryption does
 *   not start, noble did nothing: the request waited for ever, and every later one behind it.
 *   It completes with its Error Response then (`complete`), so a read fails naming it.
 * - The peripheral's Security Request (§3.6.7), which noble ignored: a peripheral that bonds
 *   before it serves (BP cuffs, glucometers) waited out its SMP timeout (30 s, §3.4) and dropped
 *   the link. noble pairs on it now, as on an authentication error, unless the link is encrypted
 *   or pairing runs; also after a pairing that failed (noble then ignored every later one).
 * - Once encrypted, noble sent the request awaiting its response again: right after an
 *   authentication error, but with the link encrypted on the peripheral's request it was a
 *   second transaction on top of the first (Vol 3 Part F §3.3.2), whose response went to the
 *   next request. It is sent again only when it was refused for want of security.
 * - One pairing per link at a time (Vol 3 Part H §3.4: a second Pairing Request while one is
 *   running is out of turn): a request refused for want of security while pairing runs (the
 *   peripheral answered it Insufficient Authentication right after its Security Request) had
 *   noble send a second Pairing Request, which restarted the responder's pairing or failed it.
 *   It waits for the running pairing now, and is sent again once the link is encrypted.
 * - A peripheral's Pairing Random that does not match its Pairing Confirm: noble answered 0x04
 *   0x03, a Pairing Random of one octet, and failed its side; the peripheral waited out its SMP
 *   timeout. It sends Pairing Failed, Confirm Value Failed, as §2.3.5.5 aborts pairing.
 * - The STK is cut to the agreed key size, the lesser Max Encryption Key Size (§2.3.4: the
 *   octets above it 0): noble used all 16, so with a peripheral of shorter keys the two keys
 *   differed, the first encrypted PDU failed its MIC and the link dropped.
 * - The Security Manager Timer (§3.4, smp-timer.ts), which noble lacked: a peripheral that never
 *   answered the Pairing Request left the refused request, and every later one, waiting for
 *   ever. At 30 s since the last SMP command sent, pairing fails as on Pairing Failed, the
 *   request naming the timeout; after it the link's SMP is silent both ways (a late answer is
 *   dropped, a refusal for want of security fails at once, a Security Request starts nothing).
 *   The timer runs until pairing is complete, that is until the responder has sent the last key
 *   agreed on once the link is encrypted (§3.6.1, smp-key-distribution.ts), not at encryption:
 *   a responder whose key distribution stalls fails pairing 30 s after the gateway's Pairing
 *   Random, the link staying encrypted, and a later refusal for want of security names it.
 */
export function guardPairing(
  proto: NobleGatt,
  complete: (gatt: NobleGatt, response: Buffer) => void,
): void {
  const onAclStreamEncrypt = proto.onAclStreamEncrypt;
  proto.onAclStreamEncrypt = function (this: NobleGatt, encrypt: number | boolean): void {
    const refusal = awaitingPairing.get(this);
    awaitingPairing.delete(this);
    pairingEnded(this, Boolean(encrypt));
    if (refusal !== undefined) {
      if (encrypt) onAclStreamEncrypt.call(this, encrypt);
      else complete(this, refusalOf(this, refusal));
    } else if (encrypt) this._security = "medium";
  };
  proto.onAclStreamEncryptFail = function (this: NobleGatt): void {
    const refusal = awaitingPairing.get(this);
    awaitingPairing.delete(this);
    pairingEnded(this, false);
    if (refusal !== undefined) complete(this, refusalOf(this, refusal));
  };
  const smp = require("@abandonware/noble/lib/hci-socket/smp") as { prototype: NobleSmp };
  const sendPairingRequest = smp.prototype.sendPairingRequest;
  smp.prototype.sendPairingRequest = function (this: NobleSmp): void {
    // After a timeout no procedure starts on this link (§3.4): fail the request at once.
    if (smpTimedOut(this)) {
      this.emit("fail");
      return;
    }
    if (pairing.has(this)) return;
    pairing.add(this);
    sendPairingRequest.call(this);
  };
  const write = smp.prototype.write;
  smp.prototype.write = function (this: NobleSmp, data: Buffer): void {
    if (smpTimedOut(this)) return;
    const mismatch = data.length === 2 && data[0] === PAIRING_RANDOM && data[1] === PAIRING_CONFIRM;
    const pdu = mismatch ? Buffer.from([PAIRING_FAILED, CONFIRM_VALUE_FAILED]) : data;
    // Reset at each SMP command queued for transmission (§3.4); Pairing Failed ends pairing.
    if (pdu[0] === PAIRING_FAILED) stopSmpTimer(this);
    else restartSmpTimer(this, () => this.emit("fail"));
    write.call(this, pdu);
  };
  const onSmpEnd = smp.prototype.onAclStreamEnd;
  smp.prototype.onAclStreamEnd = function (this: NobleSmp): void {
    stopSmpTimer(this);
    onSmpEnd.call(this);
  };
  const emit = smp.prototype.emit;
  smp.prototype.emit = function (this: NobleSmp, event: string, ...args: unknown[]): boolean {
    if (event === "stk" && Buffer.isBuffer(args[0])) args[0] = cutToKeySize(this, args[0]);
    return emit.call(this, event, ...args);
  };
  const onSmpData = smp.prototype.onAclStreamData;
  smp.prototype.onAclStreamData = function (this: NobleSmp, cid: number, data: Buffer): void {
    if (cid === SMP_CID && smpTimedOut(this)) return;
    const owed = cid === SMP_CID ? distributing.get(this) : undefined;
    if (owed !== undefined && takeKey(owed, data)) {
      // The last key agreed on: pairing is complete (§3.4 stops the timer here).
      distributing.delete(this);
      stopSmpTimer(this);
    }
    if (cid !== SMP_CID || data[0] !== SECURITY_REQUEST) onSmpData.call(this, cid, data);
    else if (!encrypted.has(this)) this.sendPairingRequest();
  };
}

const KEY_SIZE_OCTET = 4;

/** The STK (least significant octet first) with the octets past the agreed key size set to 0. */
function cutToKeySize(smp: NobleSmp, stk: Buffer): Buffer {
  const size = Math.min(smp._preq?.[KEY_SIZE_OCTET] ?? 16, smp._pres?.[KEY_SIZE_OCTET] ?? 16);
  return Buffer.from(stk).fill(0, size);
}
