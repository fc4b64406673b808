/**
 * The virtual devices' SMP (bleno's lib/hci-socket/smp.js, one per connection): where bleno
 * answers pairing wrongly.
 */
import { blenoManagement } from "./load.ts";

const PAIRING_RESPONSE = 0x02;
const PAIRING_FAILED = 0x05;
const ENCRYPTION_INFORMATION = 0x06;
const MASTER_IDENTIFICATION = 0x07;
/** bleno's reason for a central's Pairing Random that does not match: SMP_PAIRING_CONFIRM's code. */
const AUTHENTICATION_REQUIREMENTS = 0x03;
const CONFIRM_VALUE_FAILED = 0x04;
const ENCRYPTION_KEY_SIZE = 0x06;
const INVALID_PARAMETERS = 0x0a;
/** Max Encryption Key Size is 7 to 16 octets (§3.5.1); bleno's own is 16. */
const MIN_KEY_SIZE = 7;
const MAX_KEY_SIZE_OCTETS = 16;
/** Pairing Request / Response octets (Vol 3 Part H §3.5.1, §3.5.2). */
const MAX_KEY_SIZE = 4;
const INITIATOR_KEYS = 5;
const RESPONDER_KEYS = 6;
/** Key Distribution: EncKey, the LTK with EDIV and Rand (§3.6.1). */
const ENC_KEY = 0x01;

interface BlenoSmp {
  /** The central's Pairing Request and bleno's Pairing Response, once sent. */
  _preq?: Buffer;
  _pres?: Buffer;
  _stk?: Buffer | null;
  write(data: Buffer): void;
}

interface BlenoBindings {
  readonly _aclStream?: { readonly _smp?: BlenoSmp } | null;
}

/**
 * On each connection bleno accepts:
 * - A central's Pairing Random that does not give its Pairing Confirm is Pairing Failed, Confirm
 *   Value Failed (Vol 3 Part H §2.3.5.5, §3.5.5), where bleno wrote its Pairing Confirm opcode
 *   (0x03) as the reason, Authentication Requirements, which sends a gateway's log after the
 *   wrong cause. bleno sends that reason nowhere else.
 * - Key distribution: bleno's Pairing Response offered EncKey whatever the central asked; the
 *   keys a side distributes are those both ask for (§3.6.1), so its fields are cut to the
 *   Pairing Request's, and Encryption Information and Master Identification go out only when
 *   EncKey was agreed (bleno sent them to a central that asked for none).
 * - Key size: the STK is the lesser Max Encryption Key Size of the two (§2.3.4, octets above it
 *   0); bleno kept 16, so a central of shorter keys encrypted with another key and the link
 *   dropped at the first encrypted PDU (MIC failure, 0x3D). bleno assigns the STK to its `_stk`
 *   field, then gives that field to the kernel (Load Long Term Keys) and to Encryption
 *   Information: the field is cut as it is set, bleno's own crypto left as it is, and the
 *   kernel is told the agreed size with the key (loadKeysOfAgreedSize). A central
 *   whose maximum is under 7 octets is answered Pairing Failed, Encryption Key Size (§2.3.4),
 *   one over 16 Invalid Parameters, instead of bleno's Pairing Response.
 */
export function guardBlenoPairing(bleno: unknown): void {
  const host = bleno as { _bindings?: BlenoBindings; on(event: "accept", f: () => void): void };
  const mgmt = blenoManagement(bleno) as BlenoManagement | undefined;
  if (mgmt !== undefined) loadKeysOfAgreedSize(mgmt);
  host.on("accept", () => {
    const smp = host._bindings?._aclStream?._smp;
    if (smp === undefined) return;
    cutStkToKeySize(smp);
    const write = smp.write.bind(smp);
    smp.write = (data: Buffer) => {
      const wrongReason =
        data.length === 2 && data[0] === PAIRING_FAILED && data[1] === AUTHENTICATION_REQUIREMENTS;
      if (wrongReason) {
        write(Buffer.from([PAIRING_FAILED, CONFIRM_VALUE_FAILED]));
        return;
      }
      if (data[0] === PAIRING_RESPONSE && smp._preq?.length === 7) {
        const asked = smp._preq[MAX_KEY_SIZE]!;
        if (asked < MIN_KEY_SIZE || asked > MAX_KEY_SIZE_OCTETS) {
          const reason = asked < MIN_KEY_SIZE ? ENCRYPTION_KEY_SIZE : INVALID_PARAMETERS;
          write(Buffer.from([PAIRING_FAILED, reason]));
          return;
        }
      }
      // In place: bleno's `_pres` is this buffer, which its confirm values are computed over.
      if (data[0] === PAIRING_RESPONSE && data.length === 7 && smp._preq?.length === 7) {
        data[INITIATOR_KEYS]! &= smp._preq[INITIATOR_KEYS]!;
        data[RESPONDER_KEYS]! &= smp._preq[RESPONDER_KEYS]!;
      }
      const distributing = data[0] === ENCRYPTION_INFORMATION || data[0] === MASTER_IDENTIFICATION;
      if (distributing && !((smp._pres?.[RESPONDER_KEYS] ?? 0) & ENC_KEY)) return;
      write(data);
    };
  });
}

/** bleno's `_stk` as a field that keeps the agreed key size's octets of what is set on it. */
function cutStkToKeySize(smp: BlenoSmp): void {
  let stk = smp._stk;
  Object.defineProperty(smp, "_stk", {
    configurable: true,
    enumerable: true,
    get: () => stk,
    set: (value: Buffer | null | undefined) => {
      const size = Math.min(smp._preq?.[MAX_KEY_SIZE] ?? 16, smp._pres?.[MAX_KEY_SIZE] ?? 16);
      stk = Buffer.isBuffer(value) ? Buffer.from(value).fill(0, size) : value;
      if (Buffer.isBuffer(stk)) agreedKeySizes.set(stk, size);
    },
  });
}

/** The agreed key size (§2.3.4) of each STK cut to it, which bleno hands to the kernel as is. */
const agreedKeySizes = new WeakMap<Buffer, number>();

/** bleno's lib/hci-socket/mgmt.js, as far as its SMP uses it. */
interface BlenoManagement {
  addLongTermKey(
    address: Buffer,
    addressType: Buffer,
    authenticated: number,
    master: number,
    ediv: Buffer,
    rand: Buffer,
    key: Buffer,
  ): void;
}

/**
 * bleno gives the kernel its STK with Load Long Term Keys (mgmt-api.txt), the Encryption Key
 * Size of the entry taken from the key's length: 16 whatever the pairing agreed on. The kernel
 * answers the LE Long Term Key Request with that many octets of the key and takes that size as
 * the link's (net/bluetooth/hci_event.c, hci_le_ltk_request_evt: conn->enc_key_size), which
 * L2CAP's minimum key size checks and BT_SECURITY's key_size read; a btmon trace showed 16. It
 * is given the agreed size's octets now, so the entry says the size the link encrypts with.
 */
function loadKeysOfAgreedSize(mgmt: BlenoManagement): void {
  const addLongTermKey = mgmt.addLongTermKey;
  mgmt.addLongTermKey = function (this: BlenoManagement, ...args) {
    const key = args[6];
    const size = agreedKeySizes.get(key);
    if (size !== undefined) args[6] = key.subarray(0, size);
    addLongTermKey.apply(this, args);
  };
}
