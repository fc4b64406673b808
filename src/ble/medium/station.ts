import type { BdAddr } from "../hci/address.ts";
import type { Link, LinkPdu } from "./link.ts";
import type { Position } from "./path-loss.ts";

/** An advertising channel PDU as the medium carries it (Vol 6 Part B §2.3). */
export interface AdvertisingPdu {
  /** As the LE Advertising Report names it (ADV_IND 0x00 … ADV_NONCONN_IND 0x03). */
  readonly reportType: number;
  readonly address: BdAddr;
  readonly addressType: number;
  readonly data: Uint8Array;
  /** For ADV_DIRECT_IND: the initiator it is meant for. */
  readonly target?: BdAddr;
}

/** What a controller shows the medium: its radio. */
export interface Station {
  readonly address: BdAddr;
  readonly addressType: number;
  readonly name: string;
  /** Scanning or initiating: the medium hands it advertising PDUs. */
  listening(): boolean;
  hearAdvertisement(pdu: AdvertisingPdu, from: Station, rssi: number): void;
  /** A scannable advertiser answers SCAN_REQ with its scan response data (Vol 6 Part B §4.4.2.3). */
  answerScanRequest(): Uint8Array | undefined;
  linkUp(link: Link): void;
  linkReceive(link: Link, pdu: LinkPdu): void;
  linkDown(link: Link, reason: number): void;
}

export type { Position };
