import { createHash } from "node:crypto";
import { fieldError } from "../core/field-errors.ts";
import type { Rng } from "../core/rng.ts";

/**
 * The identifiers the device services read and mint: gateway ids, IMEIs, hwi_device_ids, the
 * BLE address a device is whitelisted under, and the inner `device.id` of the device record.
 */

/** wire-formats "Gateways": 12 upper-case hex characters. */
const GATEWAY_UUID = /^[0-9A-F]{12}$/;
/** 15 decimal digits, as the MQTT envelope takes them (src/mqtt/envelope.ts). */
const IMEI = /^\d{15}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Spec 2.3 / 4.2: clients strip hyphens, and matching ignores case. Returns the canonical form
 * (upper case, no hyphens, surrounding space trimmed) or null when it is not a gateway id.
 */
export function normalizeGatewayUuid(raw: string): string | null {
  const id = raw.trim().replaceAll("-", "").toUpperCase();
  return GATEWAY_UUID.test(id) ? id : null;
}

/** An IMEI with its usual separators (hyphens, spaces) removed, or null. */
export function normalizeImei(raw: string): string | null {
  const id = raw.trim().replace(/[-\s]/g, "");
  return IMEI.test(id) ? id : null;
}

export function isUuid(raw: string): boolean {
  return UUID.test(raw.trim());
}

/**
 * A list's id filter (`?webhook_id=`, `?hwi_device_id=`): undefined when not given or blank,
 * else the id in lower case; one that is no UUID is a 400 keyed by `field`, as a django-filter
 * UUIDFilter answers (not an empty list).
 */
export function uuidFilter(field: string, raw: string | undefined): string | undefined {
  const value = raw?.trim();
  if (value === undefined || value === "") return undefined;
  if (!isUuid(value)) throw fieldError(field, "Enter a valid UUID.");
  return value.toLowerCase();
}

/**
 * The BLE address a gateway device is whitelisted under (spec 2.3 mac_address: 12 characters,
 * no separators). The activation body carries no address, so the lab derives one from the
 * hwi_device_id: its last 12 hex digits, with the two top bits set as a random static address
 * has them (Bluetooth Core, Vol 6 Part B §1.3.2.1). Virtual devices advertise the same address,
 * so the simulated gateway can confirm the entry.
 */
export function deviceMacAddress(hwiDeviceId: string): string {
  const tail = hwiDeviceId.replaceAll("-", "").slice(-12).toUpperCase();
  const first = (Number.parseInt(tail.slice(0, 2), 16) | 0xc0).toString(16).toUpperCase();
  return `${first}${tail.slice(2)}`;
}

/** RFC 9562 §6.6 namespace for rpmlab's name-based ids (a fixed, arbitrary v4 UUID). */
const NAMESPACE = "5f0e5a52-6c2a-4f3e-9a57-2b8f0c1d7e34";

/**
 * wire-formats "Devices": the record nests a `device` object with an id of its own, distinct
 * from the hwi_device_id. The lab keeps no separate row for it; it is the UUID version 5 (RFC
 * 9562 §5.5) of the hwi_device_id, so it is stable and never collides with a real id.
 */
export function innerDeviceId(hwiDeviceId: string): string {
  return nameUuid(hwiDeviceId);
}

/**
 * The UUID version 5 (RFC 9562 §5.5) of `name` in rpmlab's namespace: stable ids for things the
 * lab keeps no row for (inner device objects, device types and metrics of hwi-device-types).
 */
export function nameUuid(name: string): string {
  const ns = Buffer.from(NAMESPACE.replaceAll("-", ""), "hex");
  const hash = createHash("sha1").update(ns).update(name).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const h = hash.subarray(0, 16).toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** A gateway id drawn from `rng` (replacement gateways, spec 4.3). */
export function drawGatewayUuid(rng: Rng): string {
  return rng.hex(12);
}

/**
 * An IMEI drawn from `rng`: a "35" reporting-body prefix, 12 random digits and the Luhn check
 * digit real IMEIs end with (3GPP TS 23.003 §6.2.1), for replacement cellular devices.
 */
export function drawImei(rng: Rng): string {
  let body = "35";
  while (body.length < 14) body += String(rng.int(0, 9));
  return body + luhnDigit(body);
}

function luhnDigit(digits: string): string {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    // Doubling starts from the rightmost digit of the body (it sits left of the check digit).
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return String((10 - (sum % 10)) % 10);
}
