import type { TimerHandle } from "../../core/clock.ts";
import type { BdAddr } from "../hci/address.ts";
import { ADV_REPORT, ADV_TYPE } from "../hci/constants.ts";

/** LE Set Advertising Parameters as the host gave them (Vol 4 Part E §7.8.5). */
export interface AdvertisingParams {
  intervalMin: number;
  intervalMax: number;
  type: number;
  ownAddressType: number;
  peerAddressType: number;
  peerAddress: BdAddr;
  channelMap: number;
  filterPolicy: number;
}

/** Defaults after Reset (§7.8.5: 1.28 s interval, ADV_IND, all channels). */
export const DEFAULT_ADVERTISING: AdvertisingParams = {
  intervalMin: 0x0800,
  intervalMax: 0x0800,
  type: ADV_TYPE.ADV_IND,
  ownAddressType: 0,
  peerAddressType: 0,
  peerAddress: "00:00:00:00:00:00",
  channelMap: 0x07,
  filterPolicy: 0,
};

export interface AdvertisingState {
  params: AdvertisingParams;
  data: Buffer;
  scanResponse: Buffer;
  enabled: boolean;
  timer: TimerHandle | undefined;
  /** High duty cycle directed advertising's 1.28 s limit (Vol 6 Part B §4.4.2.4.3). */
  deadline: TimerHandle | undefined;
}

export function newAdvertisingState(): AdvertisingState {
  return {
    params: DEFAULT_ADVERTISING,
    data: Buffer.alloc(0),
    scanResponse: Buffer.alloc(0),
    enabled: false,
    timer: undefined,
    deadline: undefined,
  };
}

/** The advertising report type a scanner sees for an Advertising_Type (§7.7.65.2). */
export function reportTypeOf(advertisingType: number): number {
  switch (advertisingType) {
    case ADV_TYPE.ADV_IND:
      return ADV_REPORT.ADV_IND;
    case ADV_TYPE.ADV_DIRECT_IND_HIGH:
    case ADV_TYPE.ADV_DIRECT_IND_LOW:
      return ADV_REPORT.ADV_DIRECT_IND;
    case ADV_TYPE.ADV_SCAN_IND:
      return ADV_REPORT.ADV_SCAN_IND;
    default:
      return ADV_REPORT.ADV_NONCONN_IND;
  }
}

export const isConnectable = (reportType: number): boolean =>
  reportType === ADV_REPORT.ADV_IND || reportType === ADV_REPORT.ADV_DIRECT_IND;

export const isScannable = (reportType: number): boolean =>
  reportType === ADV_REPORT.ADV_IND || reportType === ADV_REPORT.ADV_SCAN_IND;

/** LE Set Scan Parameters (§7.8.10) and LE Set Scan Enable (§7.8.11). */
export interface ScanState {
  active: boolean;
  interval: number;
  window: number;
  ownAddressType: number;
  filterPolicy: number;
  enabled: boolean;
  filterDuplicates: boolean;
  /** Reports already given while filtering duplicates: "type/address". */
  seen: Set<string>;
}

export function newScanState(): ScanState {
  return {
    active: false,
    interval: 0x0010,
    window: 0x0010,
    ownAddressType: 0,
    filterPolicy: 0,
    enabled: false,
    filterDuplicates: false,
    seen: new Set(),
  };
}

/** LE Create Connection while it waits for the peer's advertising (§7.8.12). */
export interface Initiating {
  peerAddress: BdAddr;
  peerAddressType: number;
  interval: number;
  latency: number;
  timeout: number;
}
