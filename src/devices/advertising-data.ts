import type { Profile } from "../catalogue/schema.ts";

/**
 * Advertising and scan response data of a virtual device, as AD structures (Core Supplement
 * Part A §1): Flags (§1.3: LE General Discoverable, BR/EDR not supported) and the profile's
 * primary service UUID (§1.1) in the advertisement; the Complete Local Name (§1.2) and
 * Manufacturer Specific Data (§1.4: company 0xFFFF, reserved for tests, then "RPM" and the
 * sensor code) in the scan response, so a gateway can whitelist by sensor code before connecting.
 * Each holds at most 31 octets (LE Set Advertising / Scan Response Data, Vol 4 Part E §7.8.7,
 * §7.8.8).
 */
const AD_FLAGS = 0x01;
const AD_COMPLETE_16 = 0x03;
const AD_COMPLETE_128 = 0x07;
const AD_SHORTENED_NAME = 0x08;
const AD_COMPLETE_NAME = 0x09;
const AD_MANUFACTURER = 0xff;
const COMPANY_TEST = 0xffff;
const MAGIC = Buffer.from("RPM", "ascii");
/** The most advertising or scan response data a controller takes (Vol 4 Part E §7.8.8). */
const MAX_DATA = 31;
/** An AD structure's length and type octets. */
const AD_HEADER = 2;

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

/**
 * The scan response: the local name, then the sensor code. A name too long to fit beside the
 * sensor code goes as a Shortened Local Name of its first whole characters (Core Supplement Part
 * A §1.2): the sensor code is what a gateway whitelists by, and a scan response over 31 octets
 * is refused (bleno's startAdvertisingWithEIRData), so the device did not advertise at all.
 */
export function scanResponseData(localName: string, sensorCode: string | null): Buffer {
  const parts: Buffer[] = [];
  if (sensorCode !== null) {
    const msd = Buffer.alloc(2 + MAGIC.length + 1);
    msd.writeUInt16LE(COMPANY_TEST, 0);
    MAGIC.copy(msd, 2);
    msd[2 + MAGIC.length] = Number.parseInt(sensorCode, 10);
    parts.push(ad(AD_MANUFACTURER, msd));
  }
  const room = MAX_DATA - AD_HEADER - parts.reduce((n, part) => n + part.length, 0);
  const name = Buffer.from(localName, "utf8");
  const nameAd =
    name.length <= room
      ? ad(AD_COMPLETE_NAME, name)
      : ad(AD_SHORTENED_NAME, Buffer.from(leadingCharacters(localName, room), "utf8"));
  return Buffer.concat([nameAd, ...parts]);
}

/** The longest start of `text` whose UTF-8 fits in `octets`, cut between characters. */
function leadingCharacters(text: string, octets: number): string {
  let out = "";
  let used = 0;
  for (const character of text) {
    used += Buffer.byteLength(character, "utf8");
    if (used > octets) break;
    out += character;
  }
  return out;
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
