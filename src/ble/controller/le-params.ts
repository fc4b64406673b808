/**
 * Parameter rules the LE commands share (Vol 4 Part E §7.8): checked where a command takes its
 * parameters, answered with Invalid HCI Command Parameters (0x12) when they fail.
 */

/** Connection parameters of LE Create Connection and LE Connection Update (§7.8.12, §7.8.18). */
export function validConnectionParams(
  min: number,
  max: number,
  latency: number,
  timeout: number,
): boolean {
  if (min < 0x0006 || max > 0x0c80 || min > max) return false;
  if (latency > 0x01f3 || timeout < 0x000a || timeout > 0x0c80) return false;
  // Supervision timeout (ms) > (1 + latency) × max interval (ms) × 2.
  return timeout * 10 > (1 + latency) * max * 1.25 * 2;
}

/** LE_Scan_Interval and LE_Scan_Window of a scan or an initiator (§7.8.10, §7.8.12). */
export function validScanTiming(interval: number, window: number): boolean {
  return interval >= 0x0004 && interval <= 0x4000 && window >= 0x0004 && window <= interval;
}

/**
 * A random Own_Address_Type (0x01, 0x03) needs a random address set first: enabling advertising
 * or scanning, or creating a connection, without one is refused (§7.8.9, §7.8.11, §7.8.12).
 */
export function ownAddressReady(ctl: { randomAddress: unknown }, ownAddressType: number): boolean {
  return (ownAddressType & 1) === 0 || ctl.randomAddress !== undefined;
}
