/**
 * UUIDs of the GATT services and characteristics rpmlab speaks. SIG-assigned 16-bit UUIDs are
 * written as 4 upper-case hex digits; the vendor service uses one 128-bit base of our own,
 * 7e3aXXXX-8c4d-4f6b-9a21-5d2c1b0e4f60, with the 16-bit alias in place of XXXX.
 */
export const VENDOR_BASE_UUID = "7e3a0000-8c4d-4f6b-9a21-5d2c1b0e4f60";

export function vendorUuid(alias: number): string {
  return `7e3a${alias.toString(16).padStart(4, "0")}-8c4d-4f6b-9a21-5d2c1b0e4f60`;
}

export const VENDOR = {
  /** Vendor Records Service: peak flow, fetal doppler, inhaler, med cap, proximity records. */
  service: vendorUuid(0x0001),
  /** One flags-first little-endian record per metric event, with sequence number and timestamp. */
  record: vendorUuid(0x0002),
  /**
   * Context of a SIG measurement that its characteristic cannot carry: measurement_index
   * (record sequence) and the device's UTC offset.
   */
  readingContext: vendorUuid(0x0003),
  /** Record types this device supports (read). */
  features: vendorUuid(0x0004),
} as const;

export const SIG = {
  services: {
    deviceInformation: "180A",
    battery: "180F",
    currentTime: "1805",
    bloodPressure: "1810",
    glucose: "1808",
    weightScale: "181D",
    pulseOximeter: "1822",
  },
  characteristics: {
    bloodPressureMeasurement: "2A35",
    intermediateCuffPressure: "2A36",
    bloodPressureFeature: "2A49",
    weightMeasurement: "2A9D",
    weightScaleFeature: "2A9E",
    glucoseMeasurement: "2A18",
    glucoseMeasurementContext: "2A34",
    glucoseFeature: "2A51",
    recordAccessControlPoint: "2A52",
    plxSpotCheckMeasurement: "2A5E",
    plxContinuousMeasurement: "2A5F",
    plxFeatures: "2A60",
    batteryLevel: "2A19",
    currentTime: "2A2B",
    manufacturerName: "2A29",
    modelNumber: "2A24",
    serialNumber: "2A25",
    hardwareRevision: "2A27",
    firmwareRevision: "2A26",
    softwareRevision: "2A28",
  },
} as const;

/**
 * Characteristics a reading's measurement goes out on (the profiles' `measurement` and `record`
 * roles). The values that go with it — Battery Level, the Reading Context, the Glucose
 * Measurement Context — are extras: a central may listen to the measurement alone (a phone app
 * enables the Blood Pressure Measurement CCCD and nothing else), and a device sends its stored
 * measurements once that CCCD is on (BLS 1.1 §3.1.1), so a central that wants the extras with
 * them subscribes to those first.
 */
export const MEASUREMENT_UUIDS: ReadonlySet<string> = new Set([
  SIG.characteristics.bloodPressureMeasurement,
  SIG.characteristics.weightMeasurement,
  SIG.characteristics.glucoseMeasurement,
  SIG.characteristics.plxSpotCheckMeasurement,
  SIG.characteristics.plxContinuousMeasurement,
  VENDOR.record,
]);

/**
 * The spelling rpmlab uses for a UUID: 4 upper-case hex digits for a SIG 16-bit UUID (also when
 * written on the Bluetooth base, 0000XXXX-0000-1000-8000-00805f9b34fb), lower-case dashed form
 * for any other 128-bit UUID. Host stacks differ (noble reports "2a35" and undashed 128-bit
 * UUIDs); anything else is returned unchanged.
 */
export function canonicalUuid(uuid: string): string {
  const u = uuid.toLowerCase();
  if (/^[0-9a-f]{4}$/.test(u)) return u.toUpperCase();
  const dashed = /^[0-9a-f]{32}$/.test(u)
    ? `${u.slice(0, 8)}-${u.slice(8, 12)}-${u.slice(12, 16)}-${u.slice(16, 20)}-${u.slice(20)}`
    : u;
  if (/^0000[0-9a-f]{4}-0000-1000-8000-00805f9b34fb$/.test(dashed)) {
    return dashed.slice(4, 8).toUpperCase();
  }
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(dashed)
    ? dashed
    : uuid;
}
