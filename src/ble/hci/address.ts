import { RpmlabError } from "../../core/errors.ts";

/**
 * A device address as hosts print it ("c0:ff:ee:00:00:01", most significant octet first). On
 * the wire BD_ADDR is 6 octets, least significant first (Vol 2 Part B §1.2; Vol 4 Part E §5.2).
 */
export type BdAddr = string;

const PATTERN = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/;

/** Twelve hex digits with no separators, as the lab's whitelists write an address. */
const BARE = /^[0-9a-f]{12}$/;

/**
 * An address as typed (any case; with colons, or as 12 bare hex digits as a gateway's whitelist
 * shows it) in lower case with colons; `option` names the flag in the error.
 */
export function parseBdAddr(text: string, option = "address"): BdAddr {
  const lower = text.toLowerCase();
  if (BARE.test(lower)) return lower.match(/../g)!.join(":");
  if (!PATTERN.test(lower)) {
    throw new RpmlabError(
      "E_CONFIG_INVALID",
      `${option} "${text}" is not a Bluetooth address (xx:xx:xx:xx:xx:xx, or 12 hex digits)`,
      { field: option.replace(/^--/, ""), value: text },
    );
  }
  return lower;
}

/** The six wire octets, least significant first. */
export function bdAddrToWire(address: BdAddr): Uint8Array {
  const out = new Uint8Array(6);
  const parts = address.split(":");
  for (let i = 0; i < 6; i++) out[5 - i] = Number.parseInt(parts[i]!, 16);
  return out;
}

export function bdAddrFromWire(bytes: Uint8Array, offset = 0): BdAddr {
  const parts: string[] = [];
  for (let i = 5; i >= 0; i--) parts.push((bytes[offset + i] ?? 0).toString(16).padStart(2, "0"));
  return parts.join(":");
}
