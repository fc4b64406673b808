import { describe, expect, it } from "vitest";
import { advance, type ContractEnv, expectCode, newAccount } from "./env.ts";

/** Accounts and API keys (issue text; spec 5; wire-formats "Auth"). */
export function accountsContract(env: ContractEnv): void {
  describe("accounts", () => {
    it("creates an account and finds it by client domain whatever the case", async () => {
      const a = await env.store.accounts.create({
        clientDomain: "Acme-Health",
        environment: "production",
        asrEnabled: true,
      });
      expect(a).toMatchObject({
        clientDomain: "Acme-Health",
        environment: "production",
        asrEnabled: true,
        created: env.clock.now(),
      });
      expect(await env.store.accounts.getByClientDomain("acme-health")).toEqual(a);
      expect(await env.store.accounts.getByClientDomain("ACME-HEALTH")).toEqual(a);
      expect(await env.store.accounts.getByClientDomain("acme")).toBeNull();
      expect(await env.store.accounts.get("no-such-id")).toBeNull();
      expect(await env.store.accounts.list()).toEqual([a]);
    });

    it("rejects a duplicate client domain, ignoring case", async () => {
      await newAccount(env, { clientDomain: "acme" });
      await expectCode(newAccount(env, { clientDomain: "ACME" }), "E_STORE_CONFLICT");
      // The error names the spelling that is there, so a user can find the account.
      await expect(newAccount(env, { clientDomain: "ACME" })).rejects.toThrow(
        'an account with client domain "ACME" already exists as "acme" (client domains are compared without case)',
      );
      await expect(newAccount(env, { clientDomain: "acme" })).rejects.toThrow(
        /^an account with client domain "acme" already exists$/,
      );
      expect(await env.store.accounts.list()).toHaveLength(1);
    });

    it("rejects an unknown environment", async () => {
      await expectCode(
        env.store.accounts.create({ clientDomain: "x", environment: "staging" as "production" }),
        "E_STORE_INVALID",
      );
    });

    it("updates the ASR flag and the modified time", async () => {
      const a = await newAccount(env);
      expect(a.asrEnabled).toBe(false);
      advance(env, 1000);
      const b = await env.store.accounts.update(a.id, { asrEnabled: true });
      expect(b).toMatchObject({ asrEnabled: true, created: a.created, modified: a.created + 1000 });
      await expectCode(
        env.store.accounts.update("missing", { asrEnabled: true }),
        "E_STORE_NOT_FOUND",
      );
    });
  });

  describe("api keys", () => {
    it("shows a key once, stores only its hash, lists it by prefix", async () => {
      const a = await newAccount(env);
      const { key, apiKey } = await env.store.apiKeys.create(a.id, { name: "ci" });
      expect(key).toMatch(/^rpm_dev_[0-9A-Za-z]{32}$/);
      expect(apiKey.prefix).toHaveLength(8);
      expect(key.startsWith(`rpm_dev_${apiKey.prefix}`)).toBe(true);
      const listed = await env.store.apiKeys.list(a.id);
      expect(listed).toEqual([apiKey]);
      const secret = key.slice("rpm_dev_".length);
      expect(JSON.stringify(listed)).not.toContain(secret);
      if (env.rawRows !== undefined) {
        const stored = JSON.stringify(await env.rawRows("api_keys"));
        expect(stored).toContain(apiKey.prefix);
        expect(stored).not.toContain(secret);
        expect(stored).not.toContain(secret.slice(8));
      }
    });

    it("verifies a key to its account, and nothing else", async () => {
      const a = await newAccount(env, { environment: "production" });
      const b = await newAccount(env);
      const { key, apiKey } = await env.store.apiKeys.create(a.id);
      const other = await env.store.apiKeys.create(b.id);
      expect(key.startsWith("rpm_prod_")).toBe(true);
      expect(await env.store.apiKeys.verify(key)).toEqual({ apiKey, account: a });
      expect((await env.store.apiKeys.verify(other.key))?.account.id).toBe(b.id);
      const last = key.at(-1) === "A" ? "B" : "A";
      expect(await env.store.apiKeys.verify(key.slice(0, -1) + last)).toBeNull();
      // Same secret under the other environment's tag: not a key of either environment.
      expect(await env.store.apiKeys.verify(key.replace("rpm_prod_", "rpm_dev_"))).toBeNull();
      expect(await env.store.apiKeys.verify("")).toBeNull();
      expect(await env.store.apiKeys.verify(`${key} `)).toBeNull();
    });

    it("fails verification after revoke; revoke needs the owning account", async () => {
      const a = await newAccount(env);
      const b = await newAccount(env);
      const { key, apiKey } = await env.store.apiKeys.create(a.id);
      expect(await env.store.apiKeys.revoke(b.id, apiKey.id)).toBe(false);
      expect(await env.store.apiKeys.verify(key)).not.toBeNull();
      advance(env, 5000);
      expect(await env.store.apiKeys.revoke(a.id, apiKey.id)).toBe(true);
      expect(await env.store.apiKeys.revoke(a.id, apiKey.id)).toBe(false);
      expect(await env.store.apiKeys.verify(key)).toBeNull();
      const [listed] = await env.store.apiKeys.list(a.id);
      expect(listed?.revokedAt).toBe(apiKey.created + 5000);
    });

    it("makes a different key every time, and needs an existing account", async () => {
      const a = await newAccount(env);
      const one = await env.store.apiKeys.create(a.id);
      const two = await env.store.apiKeys.create(a.id);
      expect(one.key).not.toBe(two.key);
      expect(await env.store.apiKeys.list(a.id)).toHaveLength(2);
      await expectCode(env.store.apiKeys.create("missing"), "E_STORE_NOT_FOUND");
    });
  });
}
