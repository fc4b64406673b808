import { afterEach, describe, expect, it } from "vitest";
import { hwi, type Lab, makeLab, send } from "./helpers.ts";

const ADDRESS = { address: "123 Main St", city: "Irvine", state: "CA", zip_code: "92614" };

let lab: Lab;
afterEach(() => lab.close());

const call = (method: "POST" | "PUT" | "PATCH" | "GET", path: string, body?: unknown) =>
  send(lab.app, method, hwi(lab.dev, path), lab.dev.key, body);

const statusOf = (res: { json(): { address_status: unknown; address_verified_by: unknown } }) => {
  const { address_status, address_verified_by } = res.json();
  return [address_status, address_verified_by];
};

/** Spec 3 transitions of address_status, through the API (issue "Address verification"). */
describe("address verification on patient writes", () => {
  it("POST with a full address: Verified by internal; a bad one: Invalid", async () => {
    lab = await makeLab();
    expect(statusOf(await call("POST", "hwi-patients/", { external_id: "A", ...ADDRESS }))).toEqual(
      ["Verified", "internal"],
    );
    const bad = await call("POST", "hwi-patients/", { external_id: "B", ...ADDRESS, state: "XX" });
    expect(bad.statusCode).toBe(201);
    expect(statusOf(bad)).toEqual(["Invalid", "internal"]);
  });

  it("incomplete address fields leave address_status empty (spec 7.3)", async () => {
    lab = await makeLab();
    const { zip_code: _, ...noZip } = ADDRESS;
    expect(statusOf(await call("POST", "hwi-patients/", { external_id: "A", ...noZip }))).toEqual([
      null,
      null,
    ]);
    expect(
      statusOf(await call("POST", "hwi-patients/", { external_id: "B", ...ADDRESS, city: "" })),
    ).toEqual([null, null]);
  });

  it("confirm_address true bypasses verification and is returned as sent", async () => {
    lab = await makeLab();
    const res = await call("POST", "hwi-patients/", {
      external_id: "A",
      ...ADDRESS,
      state: "XX",
      confirm_address: true,
    });
    expect(res.json()).toMatchObject({ confirm_address: true, address_status: null, state: "XX" });
  });

  it("Invalid, then PATCH confirm_address true: bypassed, the Invalid result still shown", async () => {
    lab = await makeLab();
    await call("POST", "hwi-patients/", { external_id: "A", ...ADDRESS, zip_code: "1" });
    const res = await call("PATCH", "hwi-patients/A/", { confirm_address: true });
    expect(res.json()).toMatchObject({
      confirm_address: true,
      address_status: "Invalid",
      address_verified_by: "internal",
    });
    // Taking the confirmation back re-verifies.
    const back = await call("PATCH", "hwi-patients/A/", { confirm_address: false });
    expect(statusOf(back)).toEqual(["Invalid", "internal"]);
  });

  it("any update of address fields re-verifies; other fields leave the result alone", async () => {
    lab = await makeLab();
    await call("POST", "hwi-patients/", { external_id: "A", ...ADDRESS });
    expect(statusOf(await call("PATCH", "hwi-patients/A/", { zip_code: "ABC" }))).toEqual([
      "Invalid",
      "internal",
    ]);
    expect(statusOf(await call("PATCH", "hwi-patients/A/", { name: "Renamed" }))).toEqual([
      "Invalid",
      "internal",
    ]);
    expect(statusOf(await call("PATCH", "hwi-patients/A/", { zip_code: "92614-0001" }))).toEqual([
      "Verified",
      "internal",
    ]);
    expect(statusOf(await call("PATCH", "hwi-patients/A/", { city: null }))).toEqual([null, null]);
  });

  it("PUT re-verifies the whole record: an address left out empties the result", async () => {
    lab = await makeLab();
    await call("POST", "hwi-patients/", { external_id: "A", ...ADDRESS });
    expect(
      statusOf(await call("PUT", "hwi-patients/A/", { external_id: "A", ...ADDRESS, state: "ca" })),
    ).toEqual(["Verified", "internal"]);
    expect(statusOf(await call("PUT", "hwi-patients/A/", { external_id: "A", name: "x" }))).toEqual(
      [null, null],
    );
  });

  it("the undeliverable list: the default street, or a configured list", async () => {
    lab = await makeLab();
    const dflt = await call("POST", "hwi-patients/", {
      external_id: "A",
      ...ADDRESS,
      address: "1 Undeliverable Way",
    });
    expect(statusOf(dflt)).toEqual(["Invalid", "internal"]);
    await lab.close();
    lab = await makeLab({ config: { undeliverableAddresses: [{ address: "123 Main St" }] } });
    expect(statusOf(await call("POST", "hwi-patients/", { external_id: "A", ...ADDRESS }))).toEqual(
      ["Invalid", "internal"],
    );
  });
});
