import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ADMIN, type Lab, makeLab, send } from "./helpers.ts";

const DISABLED = {
  detail:
    "The ASR module is not enabled for this account. Ask your account representative to enable it.",
};

/** Spec 1.4, 4.5: the ASR module must be enabled separately; the same authentication applies. */
describe("ASR module gate", () => {
  let lab: Lab;
  beforeEach(async () => {
    lab = await makeLab();
  });
  afterEach(() => lab.close());

  // A representative ASR path (spec 4.5 supply-types/; asr-supply-types.test.ts has its content).
  const asr = (domain: string, key: string | null, method: "GET" | "POST" = "GET") =>
    send(
      lab.app,
      method,
      `/clients/${domain}/asr/supply-types/`,
      key,
      method === "POST" ? {} : undefined,
    );

  it("403 with a clear detail while the module is disabled", async () => {
    const res = await asr("acme-dev", lab.dev.key);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual(DISABLED);
  });

  it("serves the path when enabled", async () => {
    const res = await asr("acme", lab.prod.key);
    expect(res.statusCode).toBe(200);
    expect(Array.isArray(res.json())).toBe(true);
  });

  it("the same authentication applies first: 401 without a key, 403 for another domain", async () => {
    expect((await asr("acme", null)).statusCode).toBe(401);
    const other = await asr("acme", lab.dev.key);
    expect(other.statusCode).toBe(403);
    expect(other.json().detail).toContain("environments are not interchangeable");
  });

  it("also gates a wrong method on an ASR path (405 only once enabled)", async () => {
    expect((await asr("acme-dev", lab.dev.key, "POST")).json()).toEqual(DISABLED);
    const enabled = await asr("acme", lab.prod.key, "POST");
    expect(enabled.statusCode).toBe(405);
  });

  it("follows the account's flag as the admin API toggles it", async () => {
    const on = await lab.app.inject({
      method: "PATCH",
      url: "/lab/v1/accounts/acme-dev/",
      headers: ADMIN,
      payload: { asr_enabled: true },
    });
    expect(on.json().asr_enabled).toBe(true);
    expect((await asr("acme-dev", lab.dev.key)).statusCode).toBe(200);
    await lab.app.inject({
      method: "PATCH",
      url: "/lab/v1/accounts/acme-dev/",
      headers: ADMIN,
      payload: { asr_enabled: false },
    });
    expect((await asr("acme-dev", lab.dev.key)).statusCode).toBe(403);
  });

  it("does not gate HWI paths", async () => {
    const res = await send(lab.app, "GET", "/clients/acme-dev/hwi/hwi-patients/", lab.dev.key);
    expect(res.statusCode).toBe(200);
  });
});
