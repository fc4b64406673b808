import type { BdAddr } from "../hci/address.ts";
import type { Link } from "../medium/link.ts";
import { L2capReassembler } from "./acl.ts";

/** Encryption started by the central and waiting for the peripheral's host to give its LTK. */
export interface PendingEncryption {
  random: Buffer;
  ediv: number;
  key: Buffer;
}

/** One LE connection as this controller sees it. */
export class Connection {
  readonly rx = new L2capReassembler();
  /** Host ACL packets accepted and not yet acknowledged by the peer (Vol 4 Part E §4.1.1). */
  inFlight = 0;
  encrypted = false;
  pendingEncryption: PendingEncryption | undefined;
  /** LL_TERMINATE_IND sent by this side: the reason to report when the link ends. */
  terminating = false;

  constructor(
    readonly handle: number,
    readonly link: Link,
    /** 0x00 central, 0x01 peripheral (Vol 4 Part E §7.7.65.1). */
    readonly role: 0 | 1,
    readonly peerAddress: BdAddr,
    readonly peerAddressType: number,
  ) {}
}
