import type { AddressStatus } from "../store/types.ts";
import { ADDRESS_VERIFIER, type PostalAddress, type Verification } from "./address-verification.ts";

/** The two read-only fields of spec 2.1 that verification sets. */
export interface AddressState {
  readonly addressStatus: AddressStatus | null;
  readonly addressVerifiedBy: string | null;
}

export interface AddressChange {
  /** The stored record before the write; null on create. */
  readonly before: (PostalAddress & AddressState) | null;
  /** The address and confirm_address as they will be stored. */
  readonly after: PostalAddress & { readonly confirmAddress: boolean };
  /**
   * The request sent address fields or confirm_address (always true for POST and PUT, which
   * send the whole record).
   */
  readonly touched: boolean;
}

const EMPTY: AddressState = { addressStatus: null, addressVerifiedBy: null };

/**
 * The address_status transitions of spec 3:
 * - confirm_address true bypasses verification. The previous result is kept while the address
 *   is unchanged (an Invalid stays visible, but no longer blocks fulfilment); a changed address
 *   under confirm_address has no result (the old one described another address).
 * - otherwise every write that touches the address (or clears confirm_address) re-verifies:
 *   Verified or Invalid by "internal", or empty when a field is missing (spec 7.3).
 * - a write that touches neither keeps the stored result.
 */
export function nextAddressState(
  change: AddressChange,
  verify: (address: PostalAddress) => Verification | null,
): AddressState {
  const { before, after } = change;
  if (after.confirmAddress) {
    return before !== null && sameAddress(before, after) ? pick(before) : EMPTY;
  }
  if (!change.touched && before !== null) return pick(before);
  const result = verify(after);
  return result === null
    ? EMPTY
    : { addressStatus: result.status, addressVerifiedBy: ADDRESS_VERIFIER };
}

function pick(state: AddressState): AddressState {
  return { addressStatus: state.addressStatus, addressVerifiedBy: state.addressVerifiedBy };
}

function sameAddress(a: PostalAddress, b: PostalAddress): boolean {
  return (
    (a.address ?? null) === (b.address ?? null) &&
    (a.city ?? null) === (b.city ?? null) &&
    (a.state ?? null) === (b.state ?? null) &&
    (a.zipCode ?? null) === (b.zipCode ?? null)
  );
}
