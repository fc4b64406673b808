import { describe, expect, it } from "vitest";
import { drawIccid, drawModemIdentity, luhnValid } from "../../src/cellular/modem-identity.ts";
import { Rng } from "../../src/core/rng.ts";

describe("modem identity", () => {
  it("draws an IMEI of 15 digits and a 19-digit ICCID starting 89, both with a valid Luhn digit", () => {
    for (let i = 0; i < 200; i++) {
      const id = drawModemIdentity(new Rng(`modem-${i}`));
      expect(id.imei).toMatch(/^\d{15}$/);
      expect(luhnValid(id.imei)).toBe(true);
      expect(id.iccid).toMatch(/^89\d{17}$/);
      expect(luhnValid(id.iccid)).toBe(true);
      expect(id.firmwareVersion).toMatch(/^2\.\d+\.\d$/);
      expect(id.bootloaderVersion).toMatch(/^1\.\d+\.\d$/);
    }
  });

  it("is the same for the same seed, and keeps given parts without shifting the others", () => {
    const a = drawModemIdentity(new Rng("s").fork("gateway:1"));
    expect(drawModemIdentity(new Rng("s").fork("gateway:1"))).toEqual(a);
    expect(drawModemIdentity(new Rng("s").fork("gateway:2")).imei).not.toBe(a.imei);
    const given = drawModemIdentity(new Rng("s").fork("gateway:1"), { imei: "356938035643809" });
    expect(given).toEqual({ ...a, imei: "356938035643809" });
  });

  it("rejects a changed digit (Luhn)", () => {
    const iccid = drawIccid(new Rng(7));
    const last = Number(iccid.at(-1));
    expect(luhnValid(iccid.slice(0, -1) + String((last + 1) % 10))).toBe(false);
    // A published test IMEI (3GPP TS 23.003 Annex B example).
    expect(luhnValid("490154203237518")).toBe(true);
    expect(luhnValid("490154203237519")).toBe(false);
  });
});
