/** One whitelist entry: a device address, a sensor code, or both (spec: gateway whitelist). */
export interface WhitelistEntry {
  readonly address?: string;
  readonly sensorCode?: string;
}

/** Whether an advertiser may be connected: it matches an entry on every field the entry gives. */
export function admitted(
  whitelist: readonly WhitelistEntry[],
  address: string,
  sensorCode: string | undefined,
): boolean {
  return whitelist.some(
    (e) =>
      (e.address === undefined || e.address.toLowerCase() === address.toLowerCase()) &&
      (e.sensorCode === undefined || e.sensorCode === sensorCode) &&
      (e.address !== undefined || e.sensorCode !== undefined),
  );
}
