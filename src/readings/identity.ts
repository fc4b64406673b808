import type { Profile } from "../catalogue/schema.ts";
import type { Rng } from "../core/rng.ts";

/** Who a rendered record belongs to (spec 2.4, 6.2). */
export interface DeviceIdentity {
  /** UUID of the HWI device. */
  readonly hwi_device_id: string;
  /** Gateway id (12 upper-case hex) or, for a direct-cellular device, its IMEI. */
  readonly hardware_uuid: string;
}

export interface Identities {
  /** The patient's external_id. */
  readonly patientId: string;
  readonly devices: ReadonlyMap<string, DeviceIdentity>;
}

/** Identities to use instead of drawn ones. */
export interface IdentityOverrides {
  readonly patientId?: string;
  /** The gateway every gateway-connected device of the patient is tied to. */
  readonly gatewayId?: string;
  /** By profile name. */
  readonly devices?: Readonly<Record<string, Partial<DeviceIdentity>>>;
}

/** Luhn check digit of a digit string (the IMEI's 15th digit, 3GPP TS 23.003 §6.2.1). */
export function luhnCheckDigit(digits: string): number {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    // Double every second digit counting from the right of the payload.
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return (10 - (sum % 10)) % 10;
}

/** A 15-digit IMEI: 8-digit type allocation code, 6-digit serial, Luhn check digit. */
export function drawImei(rng: Rng): string {
  let body = "35"; // a reporting body prefix common on cellular modules
  for (let i = 0; i < 12; i++) body += String(rng.int(0, 9));
  return body + String(luhnCheckDigit(body));
}

/**
 * The patient's external_id, its gateway and each device's ids: given ones, else drawn from
 * per-entity forks of `rng` (so adding a device draws nothing from another's stream).
 */
export function resolveIdentities(
  profiles: readonly Profile[],
  rng: Rng,
  overrides: IdentityOverrides = {},
): Identities {
  const patientId =
    overrides.patientId ?? String(rng.fork("identity:patient").int(1_000_000, 9_999_999));
  const gatewayId = overrides.gatewayId ?? rng.fork("identity:gateway").hex(12);
  const devices = new Map<string, DeviceIdentity>();
  for (const profile of profiles) {
    const given = overrides.devices?.[profile.name] ?? {};
    const own = rng.fork(`identity:${profile.name}`);
    const hwi = own.uuid();
    devices.set(profile.name, {
      hwi_device_id: given.hwi_device_id ?? hwi,
      hardware_uuid:
        given.hardware_uuid ?? (profile.connectivity === "cellular" ? drawImei(own) : gatewayId),
    });
  }
  return { patientId, devices };
}
