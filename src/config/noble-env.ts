/**
 * noble's own NOBLE_MULTI_ROLE (lib/hci-socket/gatt.js): when set, noble leaves the ATT requests
 * a peripheral sends it to bleno on the same adapter, and so does the lab's client guard.
 */
export function nobleMultiRole(
  env: Readonly<Record<string, string | undefined>> = process.env,
): boolean {
  return Boolean(env.NOBLE_MULTI_ROLE);
}
