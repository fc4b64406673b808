import type { BdAddr } from "../hci/address.ts";
import { ADV_TYPE, STATUS } from "../hci/constants.ts";
import * as ev from "../hci/events.ts";
import type { AdvertisingPdu, Station } from "../medium/station.ts";
import { isConnectable, isScannable, reportTypeOf } from "./advertising.ts";
import type { VirtualController } from "./virtual-controller.ts";

/**
 * The controller's side of the advertising channels (Vol 6 Part B §4.4): advertising events in
 * virtual time, scanning with its reports to the host, and initiating a connection when the
 * awaited advertiser is heard. The state these work on lives in advertising.ts; the command table
 * sets it, the medium calls in through the controller's Station methods.
 */

/** advDelay: 0–10 ms added to every advertising interval (Vol 6 Part B §4.4.2.2.1). */
const ADV_DELAY_MAX_MS = 10;
/** The longest high duty cycle directed advertising runs (Vol 6 Part B §4.4.2.4.3). */
const HIGH_DUTY_DIRECTED_MS = 1280;

export function startAdvertising(ctl: VirtualController): void {
  ctl.adv.enabled = true;
  scheduleAdvertisingEvent(ctl, ctl.rng.uniform(0, ADV_DELAY_MAX_MS));
  if (ctl.adv.params.type === ADV_TYPE.ADV_DIRECT_IND_HIGH) {
    // Vol 6 Part B §4.4.2.4.3: at most 1.28 s, then Vol 4 Part E §7.8.9: LE Connection Complete
    // with Advertising Timeout when no central connected.
    ctl.adv.deadline = ctl.clock.setTimeout(() => {
      ctl.adv.deadline = undefined;
      if (!ctl.adv.enabled) return;
      stopAdvertising(ctl);
      ctl.event(
        ev.leConnectionComplete({
          status: STATUS.ADVERTISING_TIMEOUT,
          handle: 0,
          role: 1,
          peerAddressType: ctl.adv.params.peerAddressType,
          peerAddress: ctl.adv.params.peerAddress,
          interval: 0,
          latency: 0,
          supervisionTimeout: 0,
          centralClockAccuracy: 0,
        }),
      );
    }, HIGH_DUTY_DIRECTED_MS);
  }
}

export function stopAdvertising(ctl: VirtualController): void {
  ctl.adv.enabled = false;
  if (ctl.adv.timer !== undefined) ctl.clock.clearTimeout(ctl.adv.timer);
  if (ctl.adv.deadline !== undefined) ctl.clock.clearTimeout(ctl.adv.deadline);
  ctl.adv.timer = undefined;
  ctl.adv.deadline = undefined;
}

function scheduleAdvertisingEvent(ctl: VirtualController, delayMs: number): void {
  ctl.adv.timer = ctl.clock.setTimeout(() => {
    ctl.adv.timer = undefined;
    if (!ctl.adv.enabled) return;
    const p = ctl.adv.params;
    const pdu: AdvertisingPdu = {
      reportType: reportTypeOf(p.type),
      address: ctl.ownAddress(p.ownAddressType),
      addressType: p.ownAddressType & 1,
      data: ctl.adv.data,
      ...(reportTypeOf(p.type) === 0x01 ? { target: p.peerAddress } : {}),
    };
    ctl.medium.advertise(ctl, pdu);
    if (ctl.adv.enabled) {
      scheduleAdvertisingEvent(ctl, p.intervalMin * 0.625 + ctl.rng.uniform(0, ADV_DELAY_MAX_MS));
    }
  }, delayMs);
}

/** A scannable advertiser answers SCAN_REQ with its scan response data (§4.4.2.3). */
export function answerScanRequest(ctl: VirtualController): Uint8Array | undefined {
  return ctl.adv.enabled && isScannable(reportTypeOf(ctl.adv.params.type))
    ? ctl.adv.scanResponse
    : undefined;
}

/**
 * An advertising PDU heard while scanning or initiating. Returns true when it was the advertiser
 * being initiated to and the link is up: the caller then tells that advertiser of the CONNECT_IND.
 */
export function hearAdvertisement(
  ctl: VirtualController,
  pdu: AdvertisingPdu,
  from: Station,
  rssi: number,
): boolean {
  const init = ctl.initiating;
  if (
    init !== undefined &&
    pdu.address === init.peerAddress &&
    isConnectable(pdu.reportType) &&
    (pdu.target === undefined || pdu.target === ctl.address)
  ) {
    const link = ctl.medium.connect(ctl, from, {
      interval: init.interval,
      latency: init.latency,
      timeout: init.timeout,
    });
    if (link === undefined) return false;
    ctl.initiating = undefined;
    return true;
  }
  if (!ctl.scan.enabled) return false;
  report(ctl, pdu.reportType, pdu.address, pdu.addressType, pdu.data, rssi);
  if (ctl.scan.active && isScannable(pdu.reportType)) {
    const answer = ctl.medium.scanRequest(ctl, from);
    if (answer !== undefined)
      report(ctl, 0x04, pdu.address, pdu.addressType, answer.data, answer.rssi);
  }
  return false;
}

/** LE Advertising Report (Vol 4 Part E §7.7.65.2), once per type and address when filtering. */
function report(
  ctl: VirtualController,
  type: number,
  address: BdAddr,
  addressType: number,
  data: Uint8Array,
  rssi: number,
): void {
  if (ctl.scan.filterDuplicates) {
    const key = `${type}/${address}`;
    if (ctl.scan.seen.has(key)) return;
    ctl.scan.seen.add(key);
  }
  ctl.event(ev.leAdvertisingReport({ eventType: type, addressType, address, data, rssi }));
}
