import { describe, expect, it } from "vitest";
import { advance, type ContractEnv, expectCode, newAccount, reading, T0 } from "./env.ts";

/** Spec 2.1, 4.1, 7.3: patients keyed by external_id. */
export function patientsContract(env: ContractEnv): void {
  describe("patients", () => {
    it("creates with spec defaults and looks up ignoring case", async () => {
      const a = await newAccount(env);
      const p = await env.store.patients.create(a.id, { externalId: "AnExternalID", name: "One" });
      expect(p).toMatchObject({
        externalId: "AnExternalID",
        name: "One",
        email: null,
        smsOptIn: true,
        confirmAddress: false,
        addressStatus: null,
        addressVerifiedBy: null,
      });
      expect(await env.store.patients.get(a.id, "anexternalid")).toEqual(p);
      expect(await env.store.patients.get(a.id, "ANEXTERNALID")).toEqual(p);
      expect(await env.store.patients.getById(a.id, p.id)).toEqual(p);
      expect(await env.store.patients.get(a.id, "AnExternal")).toBeNull();
    });

    it("rejects an existing external_id in any case, but not in another account", async () => {
      const a = await newAccount(env);
      const b = await newAccount(env);
      await env.store.patients.create(a.id, { externalId: "P-1" });
      await expectCode(env.store.patients.create(a.id, { externalId: "p-1" }), "E_STORE_CONFLICT");
      await expectCode(env.store.patients.create(a.id, { externalId: "P-1" }), "E_STORE_CONFLICT");
      const other = await env.store.patients.create(b.id, { externalId: "P-1" });
      expect(other.accountId).toBe(b.id);
      expect(await env.store.patients.get(b.id, "p-1")).toEqual(other);
      await expectCode(env.store.patients.create(a.id, { externalId: " " }), "E_STORE_INVALID");
    });

    it("creates a patient implicitly once, holding only the external_id (device activation)", async () => {
      const a = await newAccount(env);
      const first = await env.store.patients.ensure(a.id, "P-9");
      expect(first.created).toBe(true);
      expect(first.patient).toMatchObject({ externalId: "P-9", name: null, smsOptIn: true });
      const again = await env.store.patients.ensure(a.id, "p-9");
      expect(again).toEqual({ patient: first.patient, created: false });
      expect((await env.store.patients.list(a.id, { count: true })).total).toBe(1);
    });

    it("lists in creation order with limit, offset and total", async () => {
      const a = await newAccount(env);
      const b = await newAccount(env);
      for (const id of ["C", "A", "B"]) {
        await env.store.patients.create(a.id, { externalId: id });
        advance(env, 1);
      }
      await env.store.patients.create(b.id, { externalId: "Z" });
      const all = await env.store.patients.list(a.id);
      expect(all.rows.map((p) => p.externalId)).toEqual(["C", "A", "B"]);
      expect(all.total).toBeUndefined();
      const page = await env.store.patients.list(a.id, { limit: 2, offset: 1, count: true });
      expect(page.rows.map((p) => p.externalId)).toEqual(["A", "B"]);
      expect(page.total).toBe(3);
      const tail = await env.store.patients.list(a.id, { offset: 2 });
      expect(tail.rows.map((p) => p.externalId)).toEqual(["B"]);
    });

    it("PUT replaces every field, PATCH only those given", async () => {
      const a = await newAccount(env);
      const p = await env.store.patients.create(a.id, {
        externalId: "P-1",
        name: "One",
        city: "Irvine",
        smsOptIn: false,
      });
      advance(env, 10);
      const patched = await env.store.patients.update(a.id, "p-1", {
        email: "one@example.com",
        addressStatus: "Verified",
        addressVerifiedBy: "internal",
      });
      expect(patched).toMatchObject({
        name: "One",
        city: "Irvine",
        smsOptIn: false,
        email: "one@example.com",
        addressStatus: "Verified",
        addressVerifiedBy: "internal",
        created: p.created,
        modified: p.created + 10,
      });
      const replaced = await env.store.patients.replace(a.id, "P-1", {
        externalId: "P-1",
        name: "Uno",
      });
      expect(replaced).toMatchObject({ name: "Uno", city: null, email: null, smsOptIn: true });
      expect(replaced.addressStatus).toBeNull();
      await expectCode(
        env.store.patients.update(a.id, "P-404", { name: "x" }),
        "E_STORE_NOT_FOUND",
      );
      await expectCode(
        env.store.patients.update(a.id, "P-1", { addressStatus: "Maybe" as "Verified" }),
        "E_STORE_INVALID",
      );
    });

    it("changes an external_id unless another patient has it", async () => {
      const a = await newAccount(env);
      await env.store.patients.create(a.id, { externalId: "P-1" });
      await env.store.patients.create(a.id, { externalId: "P-2" });
      await expectCode(
        env.store.patients.update(a.id, "P-1", { externalId: "p-2" }),
        "E_STORE_CONFLICT",
      );
      const renamed = await env.store.patients.update(a.id, "P-1", { externalId: "P-3" });
      expect(renamed.externalId).toBe("P-3");
      expect(await env.store.patients.get(a.id, "P-1")).toBeNull();
      // Changing only the case of one's own id is not a conflict.
      expect((await env.store.patients.update(a.id, "P-3", { externalId: "p-3" })).externalId).toBe(
        "p-3",
      );
    });

    it("takes a patient's measurement history along when its external_id changes (spec 6.2: patient_id equals the external_id)", async () => {
      const a = await newAccount(env);
      const other = await newAccount(env);
      await env.store.patients.create(a.id, { externalId: "P-1" });
      const history = (accountId: string, minute: number) =>
        reading({
          accountId,
          deviceId: `d-${accountId}`,
          patientExternalId: "P-1",
          source: `d-${accountId}`,
          timestamp: T0 + minute * 60_000,
          measurementIndex: minute,
        });
      await env.store.measurements.insertMany([
        history(a.id, 0),
        history(a.id, 1),
        history(other.id, 0),
      ]);
      const ofPatient = async (accountId: string, externalId: string) =>
        (
          await env.store.measurements.query({
            accountId,
            patientExternalId: externalId,
            limit: 10,
          })
        ).rows;

      await env.store.patients.update(a.id, "P-1", { externalId: "P-One" });
      const moved = await ofPatient(a.id, "P-One");
      expect(moved.map((m) => m.patientExternalId)).toEqual(["P-One", "P-One"]);
      // A patient given the old id later starts with no history; the other account keeps its own.
      await env.store.patients.create(a.id, { externalId: "P-1" });
      expect(await ofPatient(a.id, "P-1")).toEqual([]);
      expect(await ofPatient(other.id, "P-1")).toHaveLength(1);
      // A change of case only moves it too (the measurement paths match the id exactly).
      await env.store.patients.replace(a.id, "p-one", { externalId: "P-ONE" });
      expect(await ofPatient(a.id, "P-ONE")).toHaveLength(2);
    });

    it("deletes a patient and leaves its devices active without patient data", async () => {
      const a = await newAccount(env);
      const p = await env.store.patients.create(a.id, { externalId: "P-1", name: "One" });
      const d = await env.store.devices.create(a.id, {
        name: "Vendor BPM - Wide Range",
        sensorCode: "10",
        hardwareUuid: "297056120BD7",
        status: "Delivered",
        patientId: p.id,
      });
      expect((await env.store.devices.get(a.id, d.id))?.patient?.externalId).toBe("P-1");
      expect(await env.store.patients.delete(a.id, "p-1")).toBe(true);
      expect(await env.store.patients.get(a.id, "P-1")).toBeNull();
      const after = await env.store.devices.get(a.id, d.id);
      expect(after).toMatchObject({
        status: "Delivered",
        hardwareUuid: "297056120BD7",
        patientId: null,
        patient: null,
      });
      expect(await env.store.patients.delete(a.id, "P-1")).toBe(false);
    });
  });
}
