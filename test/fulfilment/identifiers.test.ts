import { describe, expect, it } from "vitest";
import { Rng } from "../../src/core/rng.ts";
import {
  deviceMacAddress,
  drawImei,
  innerDeviceId,
  isUuid,
  normalizeGatewayUuid,
  normalizeImei,
} from "../../src/fulfilment/identifiers.ts";

describe("identifiers", () => {
  it("canonicalises gateway ids: hyphens stripped, upper case, 12 hex only (spec 2.3)", () => {
    expect(normalizeGatewayUuid(" 29-70-56-12-0b-d7 ")).toBe("297056120BD7");
    expect(normalizeGatewayUuid("fed091a643ff")).toBe("FED091A643FF");
    for (const bad of ["297056120BD", "297056120BD7A", "G97056120BD7", "29:70:56:12:0B:D7", ""]) {
      expect(normalizeGatewayUuid(bad)).toBeNull();
    }
  });

  it("canonicalises IMEIs (15 digits; hyphens and spaces ignored)", () => {
    expect(normalizeImei("35-693803-564380-9")).toBe("356938035643809");
    expect(normalizeImei("35 693803 564380 9")).toBe("356938035643809");
    expect(normalizeImei("35693803564380")).toBeNull();
    expect(normalizeImei("35693803564380A")).toBeNull();
  });

  it("tells UUIDs apart from gateway ids", () => {
    expect(isUuid("E9C24A26-7D69-490F-9546-93C5A31486AA")).toBe(true);
    expect(isUuid("297056120BD7")).toBe(false);
  });

  it("derives a 12-character random static BLE address from the hwi_device_id", () => {
    const mac = deviceMacAddress("e9c24a26-7d69-490f-9546-03c5a31486aa");
    // Last 12 hex digits, top two bits of the first byte set (0x03 → 0xC3).
    expect(mac).toBe("C3C5A31486AA");
    expect(deviceMacAddress("e9c24a26-7d69-490f-9546-ffc5a31486aa")).toBe("FFC5A31486AA");
  });

  it("gives the record's inner device id as a stable UUID v5 distinct from the hwi_device_id", () => {
    const id = "83ca5817-0000-4000-8000-000000000001";
    const inner = innerDeviceId(id);
    expect(inner).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(inner).toBe(innerDeviceId(id));
    expect(inner).not.toBe(innerDeviceId("83ca5817-0000-4000-8000-000000000002"));
  });

  it("draws IMEIs with a valid Luhn check digit, the same for the same seed", () => {
    const luhnOk = (imei: string) => {
      let sum = 0;
      [...imei].reverse().forEach((c, i) => {
        let d = Number(c);
        if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
        sum += d;
      });
      return sum % 10 === 0;
    };
    expect(luhnOk("490154203237518")).toBe(true); // the 3GPP TS 23.003 example IMEI
    for (let i = 0; i < 50; i++) {
      const imei = drawImei(new Rng(`imei-${i}`));
      expect(imei).toMatch(/^35\d{13}$/);
      expect(luhnOk(imei), imei).toBe(true);
    }
    expect(drawImei(new Rng("s"))).toBe(drawImei(new Rng("s")));
  });
});
