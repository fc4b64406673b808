/**
 * A virtual device's advertising and scan response data (Core Supplement Part A §1): AD
 * structures within the 31 octets LE Set Advertising / Scan Response Data take (Vol 4 Part E
 * §7.8.7, §7.8.8).
 */
import { describe, expect, it } from "vitest";
import { scanResponseData, sensorCodeOf } from "../../src/devices/advertising-data.ts";

/** The AD structures of `data`: [type, data] each. */
function structures(data: Buffer): Array<[number, Buffer]> {
  const out: Array<[number, Buffer]> = [];
  for (let at = 0; at < data.length; at += data[at]! + 1) {
    out.push([data[at + 1]!, data.subarray(at + 2, at + 1 + data[at]!)]);
  }
  return out;
}

describe("a virtual device's scan response", () => {
  it("carries the Complete Local Name and the sensor code", () => {
    const data = scanResponseData("VND-BPM-S-0001", "10");
    const ads = structures(data);
    expect(ads.map(([type]) => type)).toEqual([0x09, 0xff]);
    expect(ads[0]![1].toString("utf8")).toBe("VND-BPM-S-0001");
    expect(sensorCodeOf(ads[1]![1])).toBe("10");
  });

  it("keeps to 31 octets with a long name: the name is shortened (type 0x08), the sensor code kept", () => {
    // A profile's SKU may be long (profiles are data); the name of 24 octets and the sensor
    // code made 34 octets, over what LE Set Scan Response Data takes: bleno refused them and
    // the device did not advertise at all.
    for (const name of ["VND-BARIATRIC-SCALE-0001", "ÉCHELLE-BARIATRIQUE-Ω-0001"]) {
      const data = scanResponseData(name, "44");
      expect(data.length, name).toBeLessThanOrEqual(31);
      const ads = structures(data);
      expect(ads.map(([type]) => type)).toEqual([0x08, 0xff]);
      // Whole characters from the start of the name (Core Supplement Part A §1.2).
      const shortened = ads[0]![1].toString("utf8");
      expect(name.startsWith(shortened)).toBe(true);
      expect(Buffer.byteLength(shortened)).toBeGreaterThanOrEqual(20);
      expect(sensorCodeOf(ads[1]![1])).toBe("44");
    }
    // Without a sensor code the whole name fits.
    expect(structures(scanResponseData("VND-BARIATRIC-SCALE-0001", null))[0]![0]).toBe(0x09);
  });
});
