import { describe, expect, it } from "vitest";
import { nextAddressState } from "../../src/fulfilment/address-status.ts";
import {
  isCompleteAddress,
  type PostalAddress,
  verifyAddress,
} from "../../src/fulfilment/address-verification.ts";
import { isUsStateCode, US_STATES } from "../../src/fulfilment/us-states.ts";

const GOOD = { address: "123 Main St", city: "Irvine", state: "CA", zipCode: "92614" };

const status = (a: PostalAddress, list?: Parameters<typeof verifyAddress>[1]) =>
  verifyAddress(a, list)?.status ?? null;

/** The rules of the "Address verification" (spec 2.1, 3, 7.3). */
describe("verifyAddress", () => {
  it("is null (address_status stays empty) unless all four fields are present", () => {
    expect(status({ ...GOOD, zipCode: null })).toBeNull();
    expect(status({ ...GOOD, city: "  " })).toBeNull();
    expect(status({ address: "123 Main St" })).toBeNull();
    expect(isCompleteAddress(GOOD)).toBe(true);
  });

  it("verifies a well-formed US address", () => {
    expect(verifyAddress(GOOD)).toEqual({ status: "Verified" });
  });

  it("street: a house number and a name", () => {
    for (const address of [
      "123 Main St",
      "12B Baker Street",
      "1600 Pennsylvania Ave NW",
      "7 5th Ave",
      "221-223 O'Neil Rd",
    ]) {
      expect(status({ ...GOOD, address }), address).toBe("Verified");
    }
    for (const address of ["Main St", "123", "123 N", "PO Box 12", "St 123"]) {
      expect(status({ ...GOOD, address }), address).toBe("Invalid");
    }
  });

  it("state: a US state, DC or inhabited-territory code, any case", () => {
    for (const state of ["CA", "ny", " tx ", "DC", "PR", "GU", "VI", "AS", "MP"]) {
      expect(status({ ...GOOD, state }), state).toBe("Verified");
    }
    for (const state of ["California", "XX", "AA", "AE", "FM", "C A", "ON"]) {
      expect(status({ ...GOOD, state }), state).toBe("Invalid");
    }
    expect(Object.keys(US_STATES)).toHaveLength(56);
    expect(isUsStateCode("__proto__")).toBe(false);
  });

  it("zip: 5 or 9 digits", () => {
    for (const zipCode of ["92614", "92614-1234", "926141234"]) {
      expect(status({ ...GOOD, zipCode }), zipCode).toBe("Verified");
    }
    for (const zipCode of ["9261", "926145", "92614-12", "ABCDE", "92614 1234"]) {
      expect(status({ ...GOOD, zipCode }), zipCode).toBe("Invalid");
    }
  });

  it("lists every problem of an Invalid address", () => {
    expect(verifyAddress({ address: "Main", city: "X", state: "ZZ", zipCode: "1" })).toEqual({
      status: "Invalid",
      problems: [
        { field: "address", reason: "needs a house number and a street name" },
        { field: "state", reason: '"ZZ" is not a US state or territory code' },
        { field: "zip_code", reason: "must be 5 or 9 digits" },
      ],
    });
  });

  it("undeliverable addresses: the default list, and a configured one matched loosely", () => {
    expect(status({ ...GOOD, address: "1 Undeliverable Way" })).toBe("Invalid");
    expect(status({ ...GOOD, address: "1 undeliverable  way." })).toBe("Invalid");
    const list = [{ address: "9 Closed Rd.", zipCode: "10001" }];
    expect(status({ ...GOOD, address: "9 closed rd", zipCode: "10001-0001" }, list)).toBe(
      "Invalid",
    );
    expect(status({ ...GOOD, address: "9 Closed Rd", zipCode: "10002" }, list)).toBe("Verified");
    expect(status({ ...GOOD, address: "1 Undeliverable Way" }, list)).toBe("Verified");
  });
});

/** Spec 3: the address_status transitions. */
describe("nextAddressState", () => {
  const verified = { ...GOOD, addressStatus: "Verified" as const, addressVerifiedBy: "internal" };
  const invalid = {
    ...GOOD,
    state: "ZZ",
    addressStatus: "Invalid" as const,
    addressVerifiedBy: "internal",
  };
  const verify = (a: PostalAddress) => verifyAddress(a);

  it("verifies on create unless confirm_address", () => {
    const after = { ...GOOD, confirmAddress: false };
    expect(nextAddressState({ before: null, after, touched: true }, verify)).toEqual({
      addressStatus: "Verified",
      addressVerifiedBy: "internal",
    });
    expect(
      nextAddressState(
        { before: null, after: { ...after, confirmAddress: true }, touched: true },
        verify,
      ),
    ).toEqual({ addressStatus: null, addressVerifiedBy: null });
  });

  it("confirm_address keeps the result of an unchanged address, drops a changed one's", () => {
    const same = { ...invalid, confirmAddress: true };
    expect(nextAddressState({ before: invalid, after: same, touched: true }, verify)).toEqual({
      addressStatus: "Invalid",
      addressVerifiedBy: "internal",
    });
    const moved = { ...invalid, address: "9 Other St", confirmAddress: true };
    expect(nextAddressState({ before: invalid, after: moved, touched: true }, verify)).toEqual({
      addressStatus: null,
      addressVerifiedBy: null,
    });
  });

  it("re-verifies when touched, keeps the result when not", () => {
    const broken = { ...verified, zipCode: "1", confirmAddress: false };
    expect(
      nextAddressState({ before: verified, after: broken, touched: true }, verify).addressStatus,
    ).toBe("Invalid");
    expect(
      nextAddressState({ before: verified, after: broken, touched: false }, verify).addressStatus,
    ).toBe("Verified");
  });
});
