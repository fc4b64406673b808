/**
 * The key distribution phase of LE legacy pairing as the gateway (initiator) sees it (Core Vol 3
 * Part H §3.6.1, §2.4.3): once the link is encrypted the responder sends the keys both sides
 * agreed on, in order, and only then is pairing complete (§3.4: the Security Manager Timer runs
 * until it is). noble asks for the responder's EncKey and distributes none itself; its SMP side
 * (lib/hci-socket/smp.js) takes Encryption Information and Master Identification into `ltk` and
 * `masterIdent` events nobody listens to, and ignores the rest: the keys are dropped, and it
 * never tells when the phase ends. So the phase is followed here, by the PDUs it is made of.
 */

/** Pairing Request / Response octet: Responder Key Distribution (§3.5.1, §3.5.2). */
const RESPONDER_KEYS = 6;
const ENC_KEY = 0x01;
const ID_KEY = 0x02;
const SIGN_KEY = 0x04;
const ENCRYPTION_INFORMATION = 0x06;
const MASTER_IDENTIFICATION = 0x07;
const IDENTITY_INFORMATION = 0x08;
const IDENTITY_ADDRESS_INFORMATION = 0x09;
const SIGNING_INFORMATION = 0x0a;

/**
 * The SMP commands the responder still owes, in the order it sends them (§3.6.1: LTK, EDIV and
 * Rand, IRK, identity address, CSRK), for the keys both the Pairing Request and the Pairing
 * Response name (the responder may offer no key the initiator did not ask for).
 */
export function keysOwed(preq: Buffer | undefined, pres: Buffer | undefined): number[] {
  const agreed = (preq?.[RESPONDER_KEYS] ?? 0) & (pres?.[RESPONDER_KEYS] ?? 0);
  const owed: number[] = [];
  if (agreed & ENC_KEY) owed.push(ENCRYPTION_INFORMATION, MASTER_IDENTIFICATION);
  if (agreed & ID_KEY) owed.push(IDENTITY_INFORMATION, IDENTITY_ADDRESS_INFORMATION);
  if (agreed & SIGN_KEY) owed.push(SIGNING_INFORMATION);
  return owed;
}

/** Takes `pdu` off `owed` when it is the next key owed; true when none is owed any more. */
export function takeKey(owed: number[], pdu: Buffer): boolean {
  if (owed[0] === pdu[0]) owed.shift();
  return owed.length === 0;
}
