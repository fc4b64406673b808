import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RoutePlugin } from "../../src/api/types.ts";
import { ADMIN, apiKey, hwi, type Lab, makeLab, send } from "./helpers.ts";

/** A v2-scope route (spec 4.4) that says whose account the key opened. */
const whoAmI: RoutePlugin = async (app) => {
  app.get("/who-am-i/", async (request) => ({
    client_domain: request.client?.account.clientDomain,
  }));
};

/** Spec 5, 7.3 first checks; wire-formats "Auth and transport behaviour". */
describe("API key authentication", () => {
  let lab: Lab;
  beforeEach(async () => {
    lab = await makeLab({ extraRoutes: { v2: [whoAmI] } });
  });
  afterEach(() => lab.close());

  const list = () => hwi(lab.dev, "hwi-patients/");
  const withHeader = (authorization: string | undefined) =>
    lab.app.inject({
      method: "GET",
      url: list(),
      headers: authorization === undefined ? {} : { authorization },
    });

  it("accepts `Api-Key <key>` of the path's account", async () => {
    const res = await send(lab.app, "GET", list(), lab.dev.key);
    expect(res.statusCode).toBe(200);
  });

  it("matches the client domain of the path ignoring case (spec 5.3)", async () => {
    const res = await send(lab.app, "GET", hwi("ACME-Dev", "hwi-patients/"), lab.dev.key);
    expect(res.statusCode).toBe(200);
  });

  it("401 without an Authorization header, with DRF's text and a challenge", async () => {
    const res = await withHeader(undefined);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ detail: "Authentication credentials were not provided." });
    expect(res.headers["www-authenticate"]).toBe("Api-Key");
  });

  it("401 for the scheme in another case: the prefix is case-sensitive", async () => {
    for (const scheme of ["api-key", "API-KEY", "Api-key"]) {
      const res = await withHeader(`${scheme} ${lab.dev.key}`);
      expect(res.statusCode).toBe(401);
      expect(res.json().detail).toContain(`write "Api-Key", not "${scheme}"`);
    }
  });

  it("401 for another scheme (Bearer, Token) with the key", async () => {
    for (const scheme of ["Bearer", "Token"]) {
      const res = await withHeader(`${scheme} ${lab.dev.key}`);
      expect(res.statusCode).toBe(401);
      expect(res.json().detail).toContain(`expected "Api-Key <key>", got the "${scheme}" scheme`);
    }
  });

  it("401 for a header with no scheme or an odd one, never quoting the value back (it may be the key)", async () => {
    for (const header of [
      lab.dev.key,
      `Api-Key\t${lab.dev.key}`,
      `${lab.dev.key} ${lab.dev.key}`,
    ]) {
      const res = await withHeader(header);
      expect(res.statusCode).toBe(401);
      expect(res.body).not.toContain(lab.dev.key);
      expect(res.json().detail).toMatch(/^Invalid Authorization header: (no scheme|expected)/);
    }
  });

  it("a NUL in the client domain is the documented 400, before any lookup", async () => {
    const res = await lab.app.inject({
      method: "GET",
      url: "/clients/acme-dev%00/hwi/hwi-patients/",
      headers: apiKey(lab.dev.key),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ detail: "Null characters are not allowed (%00 in the URL)." });
  });

  it("401 for the scheme without a key", async () => {
    for (const header of ["Api-Key", "Api-Key "]) {
      const res = await withHeader(header);
      expect(res.statusCode).toBe(401);
      expect(res.json().detail).toContain("no key");
    }
  });

  it("401 for an unknown, malformed or tampered key", async () => {
    const tampered = `${lab.dev.key.slice(0, -1)}${lab.dev.key.endsWith("A") ? "B" : "A"}`;
    for (const key of [tampered, "rpm_dev_short", "not-a-key", `${lab.dev.key} extra`]) {
      const res = await withHeader(`Api-Key ${key}`);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({
        detail: "Invalid API key: it is unknown, revoked or malformed.",
      });
    }
  });

  it("401 once the key is revoked", async () => {
    expect((await send(lab.app, "GET", list(), lab.dev.key)).statusCode).toBe(200);
    await lab.store.apiKeys.revoke(lab.dev.account.id, lab.dev.keyId);
    const res = await send(lab.app, "GET", list(), lab.dev.key);
    expect(res.statusCode).toBe(401);
  });

  it("403 for a key of another client domain of the same environment", async () => {
    const res = await send(lab.app, "GET", list(), lab.other.key);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({
      detail: 'This API key belongs to client domain "other-dev", not "acme-dev".',
    });
  });

  it("403 for a client domain that does not exist (spec 5.5: a 4xx)", async () => {
    const res = await send(lab.app, "GET", hwi("nobody", "hwi-patients/"), lab.dev.key);
    expect(res.statusCode).toBe(403);
    expect(res.json().detail).toBe(
      'Client domain "nobody" does not exist; this API key belongs to client domain "acme-dev".',
    );
  });

  it("403 for a key of another environment, both ways (spec 5.2)", async () => {
    const devOnProd = await send(lab.app, "GET", hwi(lab.prod, "hwi-patients/"), lab.dev.key);
    expect(devOnProd.statusCode).toBe(403);
    expect(devOnProd.json().detail).toBe(
      'This API key is a development key (client domain "acme-dev"); client domain "acme" is a production account. Keys of different environments are not interchangeable.',
    );
    const prodOnDev = await send(lab.app, "GET", list(), lab.prod.key);
    expect(prodOnDev.statusCode).toBe(403);
    expect(prodOnDev.json().detail).toContain("This API key is a production key");
  });

  it("authenticates before validating: no key and a bad body is 401, not 400 or 415", async () => {
    const bad = await send(lab.app, "POST", list(), null, { external_id: "" });
    expect(bad.statusCode).toBe(401);
    const text = await lab.app.inject({
      method: "POST",
      url: list(),
      headers: { "content-type": "text/plain" },
      payload: "x",
    });
    expect(text.statusCode).toBe(401);
  });

  it("/api/v2/hwi/ authenticates by the key alone: the key's own account (spec 4.4)", async () => {
    const ok = await send(lab.app, "GET", "/api/v2/hwi/who-am-i/", lab.prod.key);
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ client_domain: "acme" });
    const none = await send(lab.app, "GET", "/api/v2/hwi/who-am-i/", null);
    expect(none.statusCode).toBe(401);
  });

  it("the admin token is not an API key", async () => {
    const res = await lab.app.inject({ method: "GET", url: list(), headers: ADMIN });
    expect(res.statusCode).toBe(401);
  });
});
