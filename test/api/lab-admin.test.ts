import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ADMIN, apiKey, hwi, type Lab, makeLab, send } from "./helpers.ts";

/** Issue "Accounts, keys, admin": the lab admin API under /lab/v1/ stands in for the dashboard. */
describe("lab admin API", () => {
  let lab: Lab;
  beforeEach(async () => {
    lab = await makeLab();
  });
  afterEach(() => lab.close());

  const admin = (method: "GET" | "POST" | "PATCH" | "DELETE", path: string, body?: unknown) =>
    lab.app.inject({
      method,
      url: `/lab/v1/${path}`,
      headers: ADMIN,
      ...(body === undefined ? {} : { payload: body as object }),
    });

  it("takes the admin token: 401 without or with a wrong one, 403 for an API key", async () => {
    const none = await lab.app.inject({ method: "GET", url: "/lab/v1/accounts/" });
    expect(none.statusCode).toBe(401);
    expect(none.headers["www-authenticate"]).toBe("Bearer");
    const wrong = await lab.app.inject({
      method: "GET",
      url: "/lab/v1/accounts/",
      headers: { authorization: "Bearer not-the-token" },
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toEqual({ detail: "Invalid admin token." });
    const key = await lab.app.inject({
      method: "GET",
      url: "/lab/v1/accounts/",
      headers: apiKey(lab.dev.key),
    });
    expect(key.statusCode).toBe(403);
    const basic = await lab.app.inject({
      method: "GET",
      url: "/lab/v1/accounts/",
      headers: { authorization: "Basic YWRtaW46eA==" },
    });
    expect(basic.statusCode).toBe(401);
    expect((await admin("GET", "accounts/")).statusCode).toBe(200);
  });

  it("creates and lists accounts: client domain, environment, ASR flag", async () => {
    const res = await admin("POST", "accounts/", {
      client_domain: "clinic-prod",
      environment: "production",
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      client_domain: "clinic-prod",
      environment: "production",
      asr_enabled: false,
      created: "2024-10-16T04:10:00.000000Z",
    });
    const list = (await admin("GET", "accounts/")).json();
    // Same creation instant on the virtual clock: compare as a set.
    expect(list.map((a: { client_domain: string }) => a.client_domain).sort()).toEqual([
      "acme",
      "acme-dev",
      "clinic-prod",
      "other-dev",
    ]);
    const one = await admin("GET", "accounts/CLINIC-PROD/");
    expect(one.json().id).toBe(res.json().id);
    const defaults = (await admin("POST", "accounts/", { client_domain: "x" })).json();
    expect(defaults).toMatchObject({ environment: "development", asr_enabled: false });
  });

  it("refuses a taken client domain, a bad one and a bad environment, keyed by field", async () => {
    const taken = await admin("POST", "accounts/", { client_domain: "ACME" });
    expect(taken.statusCode).toBe(400);
    expect(Object.keys(taken.json())).toEqual(["client_domain"]);
    const bad = await admin("POST", "accounts/", { client_domain: "a/b", environment: "staging" });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({
      client_domain: [
        "Letters, digits, dots and hyphens, starting and ending with a letter or digit.",
      ],
      environment: ['"staging" is not a valid choice.'],
    });
  });

  it("issues MQTT credentials; a username that is not a gateway id or an IMEI is a 400 on it", async () => {
    const ok = await admin("POST", "mqtt-credentials/", {
      role: "gateway",
      username: "BE0123456789",
    });
    expect(ok.statusCode).toBe(201);
    expect(ok.json()).toMatchObject({ username: "BE0123456789", role: "gateway" });
    for (const [role, username] of [
      ["gateway", "XYZ"],
      ["cellular", "123"],
    ]) {
      const bad = await admin("POST", "mqtt-credentials/", { role, username });
      expect(bad.statusCode).toBe(400);
      expect(Object.keys(bad.json())).toEqual(["username"]);
      expect(bad.json().username[0]).toContain(`a ${role} username must be`);
    }
  });

  it("404 for an unknown account", async () => {
    const res = await admin("GET", "accounts/nobody/");
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ detail: 'no account has client domain "nobody"' });
  });

  it("creates a key shown once, which then authenticates; lists keys by prefix only", async () => {
    const created = await admin("POST", "accounts/acme-dev/keys/", { name: "ci" });
    expect(created.statusCode).toBe(201);
    const { key, prefix, environment, name, revoked_at } = created.json();
    expect(key).toMatch(/^rpm_dev_[0-9A-Za-z]{32}$/);
    expect(key.startsWith(prefix)).toBe(true);
    expect({ environment, name, revoked_at }).toEqual({
      environment: "development",
      name: "ci",
      revoked_at: null,
    });
    const use = await send(lab.app, "GET", hwi(lab.dev, "hwi-patients/"), key);
    expect(use.statusCode).toBe(200);
    const listed = await admin("GET", "accounts/acme-dev/keys/");
    expect(listed.body).not.toContain(key);
    expect(listed.json()).toHaveLength(2);
    expect(Object.keys(listed.json()[1]).sort()).toEqual(
      ["created", "environment", "id", "name", "prefix", "revoked_at"].sort(),
    );
  });

  it("revokes a key by id or by prefix: 204, then the key is refused", async () => {
    const a = (await admin("POST", "accounts/acme-dev/keys/", {})).json();
    const byPrefix = await admin("DELETE", `accounts/acme-dev/keys/${a.prefix}/`);
    expect(byPrefix.statusCode).toBe(204);
    expect((await send(lab.app, "GET", hwi(lab.dev, "hwi-patients/"), a.key)).statusCode).toBe(401);
    const again = await admin("DELETE", `accounts/acme-dev/keys/${a.id}/`);
    expect(again.statusCode).toBe(204);
    const listed = (await admin("GET", "accounts/acme-dev/keys/")).json();
    expect(listed.find((k: { id: string }) => k.id === a.id).revoked_at).toBe(
      "2024-10-16T04:10:00.000000Z",
    );
    expect(
      (await send(lab.app, "GET", hwi(lab.dev, "hwi-patients/"), lab.dev.key)).statusCode,
    ).toBe(200);
    const unknown = await admin("DELETE", "accounts/acme-dev/keys/nothing/");
    expect(unknown.statusCode).toBe(404);
    const otherAccount = await admin("DELETE", `accounts/other-dev/keys/${lab.dev.keyId}/`);
    expect(otherAccount.statusCode).toBe(404);
  });

  it("a prefix two keys share (8 random characters can collide) is a 400 keyed by key, not a 500", async () => {
    const a = (await admin("POST", "accounts/acme-dev/keys/", {})).json();
    // A second key of the same prefix, as a collision would leave it.
    const list = lab.store.apiKeys.list.bind(lab.store.apiKeys);
    lab.store.apiKeys.list = async (accountId) => {
      const keys = await list(accountId);
      const twin = keys.find((k) => k.id === a.id);
      return twin === undefined ? keys : [...keys, { ...twin, id: `${twin.id}-twin` }];
    };
    const res = await admin("DELETE", `accounts/acme-dev/keys/${a.prefix}/`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ key: [expect.stringMatching(/names 2 keys: give the key id/)] });
  });

  it("a production account's keys are production keys", async () => {
    const res = (await admin("POST", "accounts/acme/keys/", {})).json();
    expect(res.key).toMatch(/^rpm_prod_/);
    expect(res.environment).toBe("production");
  });
});

/** README "rpmlab keys": revoke takes the whole key; `serve` logs every request at info. */
describe("a key named in a request's URL", () => {
  let lab: Lab;
  afterEach(() => lab.close());

  it("is logged as its listed prefix only, never whole", async () => {
    lab = await makeLab({ log: true });
    const { key } = lab.dev;
    const shown = `${key.slice(0, "rpm_dev_".length + 8)}…`;
    const revoked = await lab.app.inject({
      method: "DELETE",
      url: `/lab/v1/accounts/acme-dev/keys/${key}/`,
      headers: ADMIN,
    });
    expect(revoked.statusCode).toBe(204);
    // A key pasted into a query string, where no client should put it, is a key all the same.
    await lab.app.inject({
      method: "GET",
      url: `${hwi(lab.other, "hwi-patients/")}?k=${lab.other.key}`,
    });
    const urls = lab.logs.map((l) => JSON.parse(l).req?.url).filter((u) => u !== undefined);
    expect(urls).toEqual([
      `/lab/v1/accounts/acme-dev/keys/${shown}/`,
      `${hwi(lab.other, "hwi-patients/")}?k=${lab.other.key.slice(0, 16)}…`,
    ]);
    expect(lab.logs.join("\n")).not.toContain(key);
    expect(lab.logs.join("\n")).not.toContain(lab.other.key);
  });

  it("given to another account, is quoted back by its prefix only", async () => {
    lab = await makeLab();
    const { key } = lab.dev;
    const res = await lab.app.inject({
      method: "DELETE",
      url: `/lab/v1/accounts/other-dev/keys/${key}/`,
      headers: ADMIN,
    });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({
      detail: `client domain "other-dev" has no key "${key.slice(0, 16)}…"`,
    });
    expect(await send(lab.app, "GET", hwi(lab.dev, "hwi-patients/"), key)).toHaveProperty(
      "statusCode",
      200,
    );
  });
});
