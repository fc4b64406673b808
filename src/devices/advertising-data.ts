import type { Profile } from "../catalogue/schema.ts";

/**
 * Advertising and scan response data of a virtual device, as AD structures (Core Supplement
 * Part A §1): Flags (§1.3: LE General Discoverable, BR/EDR not supported) and the profile's
 * primary service UUID (§1.1) in the advertisement; the Complete Local Name (§1.2) and
 * Manufacturer Specific Data (§1.4: company 0xFFFF, reserved for tests, then "RPM" and the
 * sensor code) in the scan response, so a gateway can whitelist by sensor code before connecting.
 */
const AD_FLAGS = 0x01;
const AD_COMPLETE_16 = 0x03;
const AD_COMPLETE_128 = 0x07;
const AD_COMPLETE_NAME = 0x09;
const AD_MANUFACTURER = 0xff;
const COMPANY_TEST = 0xffff;
const MAGIC = Buffer.from("RPM", "ascii");

function ad(type: number, data: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from([data.length + 1, type]), data]);
}

/** A UUID's bytes as AD carries them: little-endian. */
export function uuidBytes(uuid: string): Buffer {
  return Buffer.from(uuid.replaceAll("-", ""), "hex").reverse();
}

export function advertisingData(profile: Profile): Buffer {
  const uuid = uuidBytes(profile.gatt.service);
  return Buffer.concat([
    ad(AD_FLAGS, Uint8Array.of(0x06)),
    ad(uuid.length === 2 ? AD_COMPLETE_16 : AD_COMPLETE_128, uuid),
  ]);
}

export function scanResponseData(localName: string, sensorCode: string | null): Buffer {
  const parts = [ad(AD_COMPLETE_NAME, Buffer.from(localName, "utf8"))];
  if (sensorCode !== null) {
    const msd = Buffer.alloc(2 + MAGIC.length + 1);
    msd.writeUInt16LE(COMPANY_TEST, 0);
    MAGIC.copy(msd, 2);
    msd[2 + MAGIC.length] = Number.parseInt(sensorCode, 10);
    parts.push(ad(AD_MANUFACTURER, msd));
  }
  return Buffer.concat(parts);
}

/** The sensor code in Manufacturer Specific Data as noble hands it over, or undefined. */
export function sensorCodeOf(manufacturerData: Uint8Array | undefined): string | undefined {
  if (manufacturerData === undefined || manufacturerData.length !== 2 + MAGIC.length + 1)
    return undefined;
  const b = Buffer.from(manufacturerData);
  if (b.readUInt16LE(0) !== COMPANY_TEST || !b.subarray(2, 2 + MAGIC.length).equals(MAGIC))
    return undefined;
  return String(b[2 + MAGIC.length]);
}
