import type { Profile } from "../catalogue/schema.ts";
import { SIG, VENDOR } from "../gatt/uuids.ts";
import { encodeVendorFeatures, vendorFeaturesOf } from "../gatt/vendor/features.ts";

type Property = "read" | "write" | "indicate" | "notify";

/** One characteristic of a device's GATT database, before any behaviour is attached. */
export interface LayoutCharacteristic {
  readonly service: string;
  readonly uuid: string;
  readonly role: Profile["gatt"]["characteristics"][number]["role"] | "information";
  readonly properties: readonly Property[];
}

/** Services in the order a device exposes them: its primary service first. */
export function serviceOrder(profile: Profile): string[] {
  const out: string[] = [profile.gatt.service];
  for (const c of profile.gatt.characteristics)
    if (c.service !== undefined && !out.includes(c.service)) out.push(c.service);
  if (!out.includes(SIG.services.deviceInformation)) out.push(SIG.services.deviceInformation);
  return out;
}

/** Device Information strings every device serves (DIS 1.1 §3). */
export const INFORMATION_UUIDS = [
  SIG.characteristics.manufacturerName,
  SIG.characteristics.modelNumber,
  SIG.characteristics.serialNumber,
  SIG.characteristics.firmwareRevision,
] as const;

/**
 * The GATT database of a profile: the characteristics its YAML lists (SIG service or the vendor
 * records service, Battery, Current Time, the Reading Context), plus Device Information.
 */
export function layoutOf(profile: Profile): LayoutCharacteristic[] {
  const out: LayoutCharacteristic[] = profile.gatt.characteristics.map((c) => ({
    service: c.service ?? profile.gatt.service,
    uuid: c.uuid,
    role: c.role,
    properties: c.properties as readonly Property[],
  }));
  for (const uuid of INFORMATION_UUIDS) {
    out.push({
      service: SIG.services.deviceInformation,
      uuid,
      role: "information",
      properties: ["read"],
    });
  }
  return out;
}

/** Characteristics the device pushes values on (notify or indicate), RACP excepted. */
export function pushedUuids(profile: Profile): string[] {
  return layoutOf(profile)
    .filter(
      (c) =>
        c.role !== "racp" && (c.properties.includes("notify") || c.properties.includes("indicate")),
    )
    .map((c) => c.uuid);
}

/**
 * Feature values (read): which optional fields the device's measurements carry.
 * BLS 1.1.1 §3.3 Blood Pressure Feature (uint16): bit 2 Irregular Pulse Detection.
 * WSS 1.0 §3.2 Weight Scale Feature (uint32): bit 0 Time Stamp Supported.
 * GLS 1.0 Glucose Feature (uint16): bit 5 Sensor Result High-Low Detection (the Sensor Status
 * Annunciation of a reading above or below range).
 * PLXS 1.0 §3.3 PLX Features (uint16): bit 2 Spot-check Measurement Storage (RACP), bit 3
 * Timestamp for Spot-check measurements, bit 6 Pulse Amplitude Index (both in every 2A5E).
 */
export function featureValue(profile: Profile, uuid: string): Uint8Array {
  switch (uuid) {
    case SIG.characteristics.bloodPressureFeature:
      return Uint8Array.of(0x04, 0x00);
    case SIG.characteristics.weightScaleFeature:
      return Uint8Array.of(0x01, 0x00, 0x00, 0x00);
    case SIG.characteristics.glucoseFeature:
      return Uint8Array.of(0x20, 0x00);
    case SIG.characteristics.plxFeatures:
      return Uint8Array.of(0x4c, 0x00);
    case VENDOR.features:
      return encodeVendorFeatures(vendorFeaturesOf(profile));
    default:
      return new Uint8Array(0);
  }
}
