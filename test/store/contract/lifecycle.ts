import { describe, expect, it } from "vitest";
import { Rng } from "../../../src/core/rng.ts";
import { type ContractEnv, expectCode, newAccount } from "./env.ts";

/** migrate(), transaction(), close(), ids. */
export function lifecycleContract(env: ContractEnv, persistent: boolean): void {
  describe("lifecycle", () => {
    it("migrates idempotently: a second migrate applies nothing and keeps the data", async () => {
      const account = await newAccount(env);
      expect(await env.store.migrate()).toEqual([]);
      expect(await env.store.migrate()).toEqual([]);
      expect(await env.store.accounts.get(account.id)).toEqual(account);
    });

    // A :memory: database is private to its store: nothing to reopen.
    it.runIf(persistent)(
      "sees the same data, migrated, from a second store on the database",
      async () => {
        const account = await newAccount(env);
        const second = await env.reopen!();
        expect(await second.migrate()).toEqual([]);
        expect(await second.accounts.get(account.id)).toEqual(account);
        // A reopened store draws ids from a new stream: no collision with the first store's.
        const other = await second.accounts.create({
          clientDomain: "second-store",
          environment: "production",
        });
        const third = await env.store.accounts.create({
          clientDomain: "first-store-again",
          environment: "production",
        });
        expect(new Set([account.id, other.id, third.id]).size).toBe(3);
      },
    );

    it("draws public ids from the seeded Rng: same seed, fresh store, same ids", async () => {
      const account = await newAccount(env);
      expect(account.id).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
      // Every contract store starts from seed "store-contract" on a new database: epoch 1.
      expect(account.id).toBe(new Rng("store-contract").fork("store-ids/1").uuid());
    });

    it("commits a transaction that resolves", async () => {
      const account = await newAccount(env);
      const result = await env.store.transaction(async (tx) => {
        const p = await tx.patients.create(account.id, { externalId: "P-1" });
        await tx.devices.create(account.id, {
          name: "BPM",
          status: "Dropshipped",
          patientId: p.id,
        });
        return p.externalId;
      });
      expect(result).toBe("P-1");
      expect(await env.store.patients.get(account.id, "P-1")).not.toBeNull();
      expect((await env.store.devices.list(account.id)).rows).toHaveLength(1);
    });

    it("rolls back every write of a transaction that throws, and rethrows its error", async () => {
      const account = await newAccount(env);
      const boom = new Error("boom");
      const outcome = env.store.transaction(async (tx) => {
        const p = await tx.patients.create(account.id, { externalId: "P-1" });
        await tx.devices.create(account.id, {
          name: "BPM",
          hardwareUuid: "297056120BD7",
          status: "Dropshipped",
          patientId: p.id,
        });
        await tx.measurements.insertMany([]);
        await tx.gateways.updateStatus("297056120BD7", { lastSignalStrength: 20 });
        throw boom;
      });
      await expect(outcome).rejects.toBe(boom);
      expect(await env.store.patients.get(account.id, "P-1")).toBeNull();
      expect((await env.store.devices.list(account.id)).rows).toEqual([]);
      expect((await env.store.hardwareLogs.list(account.id)).rows).toEqual([]);
      expect(await env.store.gateways.get("297056120BD7")).toBeNull();
    });

    it("keeps the transaction usable after a conflict reported inside it", async () => {
      const account = await newAccount(env);
      await env.store.transaction(async (tx) => {
        await tx.patients.create(account.id, { externalId: "P-1" });
        await expectCode(tx.patients.create(account.id, { externalId: "p-1" }), "E_STORE_CONFLICT");
        await tx.patients.create(account.id, { externalId: "P-2" });
      });
      const { rows } = await env.store.patients.list(account.id);
      expect(rows.map((p) => p.externalId)).toEqual(["P-1", "P-2"]);
    });

    it("closes idempotently", async () => {
      await env.store.close();
      await env.store.close();
    });
  });
}
