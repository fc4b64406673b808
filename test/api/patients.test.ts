import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { patientService } from "../../src/api/services/patients.ts";
import { hwi, type Lab, makeLab, send } from "./helpers.ts";
import { ok, reading } from "./hwi-fixtures.ts";

/** Spec 2.1 in order: every field of the record, nothing else. */
const FIELDS = [
  "external_id",
  "name",
  "address",
  "city",
  "state",
  "zip_code",
  "phone_number",
  "email",
  "physician",
  "clinic_name",
  "care_manager",
  "sms_opt_in",
  "confirm_address",
  "address_status",
  "address_verified_by",
];

const FULL = {
  external_id: "AnExternalID",
  name: "Patient One",
  address: "123 Main St",
  city: "Irvine",
  state: "CA",
  zip_code: "92614",
  phone_number: "+1 555 0100",
  email: "one@example.com",
  physician: "Dr. Who",
  clinic_name: "Clinic",
  care_manager: "Care Manager",
  sms_opt_in: false,
  confirm_address: false,
};

/** Spec 4.1, one test per row and the rules of 2.1 and 7.3. */
describe("hwi-patients", () => {
  let lab: Lab;
  beforeEach(async () => {
    lab = await makeLab();
  });
  afterEach(() => lab.close());

  const call = (
    method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
    path: string,
    body?: unknown,
  ) => send(lab.app, method, hwi(lab.dev, path), lab.dev.key, body);

  /** Patient P-1 with an active cuff on a gateway, as the store keeps them. */
  async function patientWithCuff() {
    const created = await lab.store.patients.create(lab.dev.account.id, { externalId: "P-1" });
    return lab.store.devices.create(lab.dev.account.id, {
      name: "Vendor BPM - Wide Range",
      sensorCode: "10",
      hardwareUuid: "297056120BD7",
      patientId: created.id,
      status: "Active",
    });
  }

  it("POST creates: 201 with the full record including the address fields", async () => {
    const res = await call("POST", "hwi-patients/", FULL);
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(Object.keys(body)).toEqual(FIELDS);
    expect(body).toEqual({ ...FULL, address_status: "Verified", address_verified_by: "internal" });
  });

  it("POST with only external_id: spec 2.1 defaults (sms_opt_in true, confirm_address false)", async () => {
    const res = await call("POST", "hwi-patients/", { external_id: "P-1" });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      external_id: "P-1",
      name: null,
      address: null,
      city: null,
      state: null,
      zip_code: null,
      phone_number: null,
      email: null,
      physician: null,
      clinic_name: null,
      care_manager: null,
      sms_opt_in: true,
      confirm_address: false,
      address_status: null,
      address_verified_by: null,
    });
  });

  it("POST of an existing external_id, in any case: 400 keyed external_id (spec 7.3)", async () => {
    await call("POST", "hwi-patients/", { external_id: "P-1", name: "First" });
    for (const id of ["P-1", "p-1"]) {
      const res = await call("POST", "hwi-patients/", { external_id: id, name: "Second" });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        external_id: ["patient with this external id already exists."],
      });
    }
    expect((await call("GET", "hwi-patients/P-1/")).json().name).toBe("First");
  });

  it("the same external_id in another account is another patient", async () => {
    await call("POST", "hwi-patients/", { external_id: "P-1" });
    const res = await send(lab.app, "POST", hwi(lab.other, "hwi-patients/"), lab.other.key, {
      external_id: "P-1",
    });
    expect(res.statusCode).toBe(201);
    const list = await send(lab.app, "GET", hwi(lab.other, "hwi-patients/"), lab.other.key);
    expect(list.json().count).toBe(1);
  });

  it("GET list: always the envelope, with or without page (spec 4.1)", async () => {
    for (const id of ["A", "B", "C"]) await call("POST", "hwi-patients/", { external_id: id });
    const res = await call("GET", "hwi-patients/");
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body)).toEqual(["count", "next", "previous", "results"]);
    expect(body.count).toBe(3);
    expect(body.results.map((p: { external_id: string }) => p.external_id)).toEqual([
      "A",
      "B",
      "C",
    ]);
    expect(Object.keys(body.results[0])).toEqual(FIELDS);
    expect((await call("GET", "hwi-patients/?page=1")).json()).toEqual(body);
  });

  it("GET one: 200 when present, looked up ignoring case; 404 when absent", async () => {
    await call("POST", "hwi-patients/", FULL);
    for (const id of ["AnExternalID", "anexternalid", "ANEXTERNALID"]) {
      const res = await call("GET", `hwi-patients/${id}/`);
      expect(res.statusCode).toBe(200);
      expect(res.json().external_id).toBe("AnExternalID");
    }
    const missing = await call("GET", "hwi-patients/AnExternal/");
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ detail: "No Patient matches the given query." });
  });

  it("reads external_ids that need escaping in the path", async () => {
    await call("POST", "hwi-patients/", { external_id: "a b/c?d" });
    const res = await call("GET", `hwi-patients/${encodeURIComponent("a b/c?d")}/`);
    expect(res.statusCode).toBe(200);
  });

  it("PUT replaces the whole record: fields left out return to their defaults", async () => {
    await call("POST", "hwi-patients/", FULL);
    const res = await call("PUT", "hwi-patients/anexternalid/", {
      external_id: "AnExternalID",
      name: "Renamed",
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      external_id: "AnExternalID",
      name: "Renamed",
      address: null,
      city: null,
      state: null,
      zip_code: null,
      phone_number: null,
      email: null,
      physician: null,
      clinic_name: null,
      care_manager: null,
      sms_opt_in: true,
      confirm_address: false,
      address_status: null,
      address_verified_by: null,
    });
  });

  it("PUT needs external_id and an existing patient", async () => {
    await call("POST", "hwi-patients/", FULL);
    const missingId = await call("PUT", "hwi-patients/AnExternalID/", { name: "x" });
    expect(missingId.statusCode).toBe(400);
    expect(missingId.json()).toEqual({ external_id: ["This field is required."] });
    const unknown = await call("PUT", "hwi-patients/nobody/", { external_id: "nobody" });
    expect(unknown.statusCode).toBe(404);
  });

  it("PUT or PATCH with another external_id renames; onto an existing one: 400", async () => {
    await call("POST", "hwi-patients/", { external_id: "P-1" });
    await call("POST", "hwi-patients/", { external_id: "P-2" });
    const renamed = await call("PATCH", "hwi-patients/P-1/", { external_id: "P-9" });
    expect(renamed.json().external_id).toBe("P-9");
    expect((await call("GET", "hwi-patients/P-1/")).statusCode).toBe(404);
    const clash = await call("PUT", "hwi-patients/P-9/", { external_id: "p-2" });
    expect(clash.statusCode).toBe(400);
    expect(clash.json()).toEqual({
      external_id: ["patient with this external id already exists."],
    });
  });

  it("PATCH changes only the fields sent and returns the full record", async () => {
    await call("POST", "hwi-patients/", FULL);
    const res = await call("PATCH", "hwi-patients/AnExternalID/", {
      email: null,
      sms_opt_in: true,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      ...FULL,
      email: null,
      sms_opt_in: true,
      address_status: "Verified",
      address_verified_by: "internal",
    });
    const empty = await call("PATCH", "hwi-patients/AnExternalID/", {});
    expect(empty.json()).toEqual(res.json());
    expect((await call("PATCH", "hwi-patients/nobody/", {})).statusCode).toBe(404);
  });

  it("DELETE: 204 with no body; then 404; linked devices stay, without patient", async () => {
    const device = await patientWithCuff();
    const res = await call("DELETE", "hwi-patients/p-1/");
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe("");
    expect((await call("GET", "hwi-patients/P-1/")).statusCode).toBe(404);
    expect((await call("DELETE", "hwi-patients/P-1/")).statusCode).toBe(404);
    const after = await lab.store.devices.get(lab.dev.account.id, device.id);
    expect(after).toMatchObject({
      id: device.id,
      status: "Active",
      patientId: null,
      patient: null,
    });
    expect(after?.hardwareUuid).toBe("297056120BD7");
  });

  it("DELETE: a device request of the patient not shipped yet waits for the client (no address left)", async () => {
    await call("POST", "hwi-patients/", FULL);
    const ordered = await call("POST", "hwi-devices/", {
      device: { name: "Vendor Scale" },
      patient: { external_id: FULL.external_id },
    });
    expect(ordered.statusCode).toBe(201);
    const id = ordered.json().id as string;
    expect(["Ready to Ship", "On Hold"]).toContain(ordered.json().status);
    expect((await call("DELETE", `hwi-patients/${FULL.external_id}/`)).statusCode).toBe(204);
    const after = await call("GET", `hwi-devices/${id}/`);
    expect(after.json()).toMatchObject({ status: "Client Action Required", patient: null });
    // A patient attached again with a deliverable address releases it.
    const attached = await call("PUT", `hwi-devices/${id}/`, {
      patient: { ...FULL, external_id: "P-2" },
    });
    expect(attached.statusCode).toBe(200);
    expect(["Ready to Ship", "On Hold"]).toContain(attached.json().status);
  });

  it("DELETE: the readings leave with the patient; a patient given the id later starts with none", async () => {
    const device = await patientWithCuff();
    await lab.store.measurements.insertMany([reading(lab.dev, device.id)]);
    const before = ok<unknown[]>(await call("GET", "patients/P-1/measurements/"));
    expect(before).toHaveLength(1);
    expect((await call("DELETE", "hwi-patients/P-1/")).statusCode).toBe(204);
    expect((await call("POST", "hwi-patients/", { external_id: "P-1" })).statusCode).toBe(201);
    expect(ok(await call("GET", "patients/P-1/measurements/"))).toEqual([]);
    // The device keeps its history, without the patient (spec 4.1).
    const kept = ok<{ patient_id: string | null }[]>(
      await call("GET", `hwi-devices/${device.id}/measurements/`),
    );
    expect(kept.map((r) => r.patient_id)).toEqual([null]);
  });

  it("is scoped to the key's account: another account's patient is not found", async () => {
    await call("POST", "hwi-patients/", { external_id: "P-1" });
    const res = await send(lab.app, "GET", hwi(lab.other, "hwi-patients/P-1/"), lab.other.key);
    expect(res.statusCode).toBe(404);
  });
});

/** Spec 2.1: a nested patient on device activation links or creates (service used by devices). */
describe("nested patient (device activation)", () => {
  let lab: Lab;
  beforeEach(async () => {
    lab = await makeLab();
  });
  afterEach(() => lab.close());

  it("creates a record holding only the external_id, then links to it", async () => {
    const service = patientService({ store: lab.store, clock: lab.clock });
    const first = await service.upsertNested(lab.dev.account.id, { external_id: "P-7" });
    expect(first.created).toBe(true);
    expect(first.patient).toMatchObject({ externalId: "P-7", name: null, addressStatus: null });
    const again = await service.upsertNested(lab.dev.account.id, { external_id: "p-7" });
    expect(again).toEqual({ patient: first.patient, created: false });
    const res = await send(lab.app, "GET", hwi(lab.dev, "hwi-patients/"), lab.dev.key);
    expect(res.json().count).toBe(1);
  });

  it("other nested fields update the record, with address verification", async () => {
    const service = patientService({ store: lab.store, clock: lab.clock });
    await service.upsertNested(lab.dev.account.id, { external_id: "P-7" });
    const updated = await service.upsertNested(lab.dev.account.id, {
      external_id: "P-7",
      name: "Seven",
      address: "7 Elm St",
      city: "Austin",
      state: "TX",
      zip_code: "73301",
    });
    expect(updated.created).toBe(false);
    expect(updated.patient).toMatchObject({
      name: "Seven",
      addressStatus: "Verified",
      addressVerifiedBy: "internal",
    });
  });
});
