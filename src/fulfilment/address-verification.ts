import { isUsStateCode } from "./us-states.ts";

/**
 * Rule-based address verification (spec 2.1, 3; issue "Address verification"). Deterministic
 * and offline: the real service calls an address service; the lab applies fixed rules, so a test
 * can predict Verified or Invalid from the address alone.
 */

/** spec 2.1 address_verified_by: the sample shows "internal". */
export const ADDRESS_VERIFIER = "internal";

/** The four fields of spec 2.1 verification reads; absent or null means not sent. */
export interface PostalAddress {
  readonly address?: string | null;
  readonly city?: string | null;
  readonly state?: string | null;
  readonly zipCode?: string | null;
}

/**
 * An address the lab's carrier "cannot deliver to". `address` must match; city, state and
 * zip_code match too when given (ignoring case, punctuation and extra spaces; zip by its first
 * five digits).
 */
export interface UndeliverableAddress {
  readonly address: string;
  readonly city?: string;
  readonly state?: string;
  readonly zipCode?: string;
}

/**
 * The lab's default list: one well-formed street that always comes back Invalid, so an
 * integration can exercise the Invalid path (and Client Action Required later) without
 * configuring anything.
 */
export const DEFAULT_UNDELIVERABLE_ADDRESSES: readonly UndeliverableAddress[] = [
  { address: "1 Undeliverable Way" },
];

export type AddressField = "address" | "city" | "state" | "zip_code";

export interface AddressProblem {
  readonly field: AddressField;
  readonly reason: string;
}

export type Verification =
  | { readonly status: "Verified" }
  | { readonly status: "Invalid"; readonly problems: readonly AddressProblem[] };

/** Spec 7.3: address, city, state and zip_code must all be sent (blank counts as missing). */
export function isCompleteAddress(a: PostalAddress): boolean {
  return [a.address, a.city, a.state, a.zipCode].every(
    (v) => typeof v === "string" && v.trim() !== "",
  );
}

/** 5 digits, or ZIP+4 as 9 digits with or without the hyphen. */
const ZIP = /^\d{5}(?:-?\d{4})?$/;
/** A house number (optionally 12B, 12-14, 12/2), then a street name with a word of 2+ letters. */
const STREET = /^\d+[A-Za-z]?(?:[-/]\d+[A-Za-z]?)?\s+(?:.*\s)?[A-Za-z][A-Za-z'.-]*[A-Za-z.]/;

/**
 * Verified or Invalid (with every reason), or null when the address is incomplete: then
 * address_status stays empty (spec 7.3).
 */
export function verifyAddress(
  a: PostalAddress,
  undeliverable: readonly UndeliverableAddress[] = DEFAULT_UNDELIVERABLE_ADDRESSES,
): Verification | null {
  if (!isCompleteAddress(a)) return null;
  const address = a.address!.trim();
  const state = a.state!.trim();
  const zip = a.zipCode!.trim();
  const problems: AddressProblem[] = [];
  if (!STREET.test(address)) {
    problems.push({ field: "address", reason: "needs a house number and a street name" });
  }
  if (!isUsStateCode(state)) {
    problems.push({ field: "state", reason: `"${state}" is not a US state or territory code` });
  }
  if (!ZIP.test(zip)) problems.push({ field: "zip_code", reason: "must be 5 or 9 digits" });
  if (problems.length === 0 && undeliverable.some((u) => matches(u, a))) {
    problems.push({ field: "address", reason: "the carrier cannot deliver to this address" });
  }
  return problems.length === 0 ? { status: "Verified" } : { status: "Invalid", problems };
}

function normalize(text: string | null | undefined): string {
  return (text ?? "").toLowerCase().replace(/[.,#]/g, " ").replace(/\s+/g, " ").trim();
}

function zip5(text: string | null | undefined): string {
  return (text ?? "").trim().slice(0, 5);
}

function matches(u: UndeliverableAddress, a: PostalAddress): boolean {
  return (
    normalize(u.address) === normalize(a.address) &&
    (u.city === undefined || normalize(u.city) === normalize(a.city)) &&
    (u.state === undefined || normalize(u.state) === normalize(a.state)) &&
    (u.zipCode === undefined || zip5(u.zipCode) === zip5(a.zipCode))
  );
}
