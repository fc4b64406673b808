import type { Rng } from "../core/rng.ts";
import { drawImei, luhnCheckDigit } from "../readings/identity.ts";

/**
 * Who a cellular modem is: what a gateway (spec 2.2) or a direct-cellular device (spec 2.8)
 * reports about its radio. The IMEI names the device on the network and, for a direct-cellular
 * device, is its hardware id; the ICCID names the SIM.
 */
export interface ModemIdentity {
  /** 15 digits, Luhn check digit last (3GPP TS 23.003 §6.2.1). */
  readonly imei: string;
  /** 19 digits: 89 (telecom), 1 (country: North America), issuer and account, Luhn (ITU-T E.118). */
  readonly iccid: string;
  /** Modem firmware, e.g. "2.14.3". */
  readonly firmwareVersion: string;
  /** Bootloader, e.g. "1.0.7". */
  readonly bootloaderVersion: string;
}

/** ITU-T E.118: major industry identifier 89 (telecommunications) and country code 1. */
const ICCID_PREFIX = "891";
/** Digits before the check digit: a 19-digit ICCID, the length most carriers issue. */
const ICCID_BODY_DIGITS = 18;

/** A 19-digit ICCID with its Luhn check digit. */
export function drawIccid(rng: Rng): string {
  let body = ICCID_PREFIX;
  while (body.length < ICCID_BODY_DIGITS) body += String(rng.int(0, 9));
  return body + String(luhnCheckDigit(body));
}

/** Whether `digits` ends with the Luhn check digit of the rest (IMEI, ICCID). */
export function luhnValid(digits: string): boolean {
  return (
    /^\d{2,}$/.test(digits) && luhnCheckDigit(digits.slice(0, -1)) === Number(digits.slice(-1))
  );
}

/**
 * A modem's identity drawn from `rng` (fork it per gateway or device), with given parts kept:
 * e.g. a device activated with a known IMEI keeps it and draws the rest.
 */
export function drawModemIdentity(rng: Rng, given: Partial<ModemIdentity> = {}): ModemIdentity {
  // One fork per part, so giving one part does not shift the others.
  return {
    imei: given.imei ?? drawImei(rng.fork("imei")),
    iccid: given.iccid ?? drawIccid(rng.fork("iccid")),
    firmwareVersion: given.firmwareVersion ?? drawVersion(rng.fork("firmware"), 2),
    bootloaderVersion: given.bootloaderVersion ?? drawVersion(rng.fork("bootloader"), 1),
  };
}

function drawVersion(rng: Rng, major: number): string {
  return `${major}.${rng.int(0, 20)}.${rng.int(0, 9)}`;
}
