import { afterEach, describe, expect, it } from "vitest";
import { parseRateLimit } from "../../src/config/rate-limit.ts";
import { hwi, type Lab, makeLab, send } from "./helpers.ts";

let lab: Lab;
afterEach(() => lab.close());

const get = (key: string, account = lab.dev) =>
  send(lab.app, "GET", hwi(account, "hwi-patients/"), key);

/** Spec 8.4; wire-formats: the real service allows 1 request per second per key. */
describe("per-key rate limit", () => {
  it("is off by default", async () => {
    lab = await makeLab();
    for (let i = 0; i < 30; i++) expect((await get(lab.dev.key)).statusCode).toBe(200);
  });

  it("1/s: the second request in the same second is 429 with Retry-After and DRF's text", async () => {
    lab = await makeLab({ config: { rateLimit: parseRateLimit("1/s") } });
    expect((await get(lab.dev.key)).statusCode).toBe(200);
    const refused = await get(lab.dev.key);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers["retry-after"]).toBe("1");
    expect(refused.json()).toEqual({
      detail: "Request was throttled. Expected available in 1 second.",
    });
    expect(refused.headers["x-ratelimit-limit"]).toBeUndefined();
    lab.advance(999);
    expect((await get(lab.dev.key)).statusCode).toBe(429);
    lab.advance(1);
    expect((await get(lab.dev.key)).statusCode).toBe(200);
  });

  it("Retry-After counts down as the clock advances", async () => {
    lab = await makeLab({ config: { rateLimit: parseRateLimit("2/m") } });
    expect((await get(lab.dev.key)).statusCode).toBe(200);
    lab.advance(10_000);
    expect((await get(lab.dev.key)).statusCode).toBe(200);
    const first = await get(lab.dev.key);
    expect(first.statusCode).toBe(429);
    expect(first.headers["retry-after"]).toBe("50");
    expect(first.json().detail).toBe("Request was throttled. Expected available in 50 seconds.");
    lab.advance(20_000);
    expect((await get(lab.dev.key)).headers["retry-after"]).toBe("30");
    lab.advance(30_000);
    // The window slides: the first request has left it, the second (at +10 s) has not.
    expect((await get(lab.dev.key)).statusCode).toBe(200);
    expect((await get(lab.dev.key)).headers["retry-after"]).toBe("10");
  });

  it("counts per key: another key, even of the same account, has its own budget", async () => {
    lab = await makeLab({ config: { rateLimit: parseRateLimit("1/s") } });
    const second = await lab.store.apiKeys.create(lab.dev.account.id);
    expect((await get(lab.dev.key)).statusCode).toBe(200);
    expect((await get(second.key)).statusCode).toBe(200);
    expect((await get(lab.other.key, lab.other)).statusCode).toBe(200);
    expect((await get(lab.dev.key)).statusCode).toBe(429);
  });

  it("one budget per key across the hwi, asr and v2 paths", async () => {
    lab = await makeLab({ config: { rateLimit: parseRateLimit("2/s") } });
    const key = lab.prod.key;
    expect((await get(key, lab.prod)).statusCode).toBe(200);
    expect((await send(lab.app, "GET", "/clients/acme/asr/supply-types/", key)).statusCode).toBe(
      200,
    );
    const third = await send(lab.app, "GET", "/api/v2/hwi/patient-measurements/", key);
    expect(third.statusCode).toBe(429);
  });

  it("authentication comes first: a request without a key is 401, never 429", async () => {
    lab = await makeLab({ config: { rateLimit: parseRateLimit("1/s") } });
    for (let i = 0; i < 3; i++) {
      const res = await send(lab.app, "GET", hwi(lab.dev, "hwi-patients/"), null);
      expect(res.statusCode).toBe(401);
    }
  });

  it("counts and throttles a request of another method on a known path, as DRF throttles before it finds no handler", async () => {
    lab = await makeLab({ config: { rateLimit: parseRateLimit("1/s") } });
    // gateway-info/{id}/ answers GET only: a DELETE is 405, and it uses the key's budget.
    const url = hwi(lab.dev, "gateway-info/297056120BD7/");
    expect((await send(lab.app, "DELETE", url, lab.dev.key)).statusCode).toBe(405);
    const after = await get(lab.dev.key);
    expect(after.statusCode).toBe(429);
    expect(after.headers["retry-after"]).toBe("1");
    // A throttled key's wrong method is 429 too, not 405.
    lab.advance(1000);
    expect((await get(lab.dev.key)).statusCode).toBe(200);
    expect((await send(lab.app, "DELETE", url, lab.dev.key)).statusCode).toBe(429);
  });

  it("does not apply to the lab admin API", async () => {
    lab = await makeLab({ config: { rateLimit: parseRateLimit("1/s") } });
    for (let i = 0; i < 3; i++) {
      const res = await lab.app.inject({
        method: "GET",
        url: "/lab/v1/accounts/",
        headers: { authorization: "Bearer lab-admin-token-for-tests" },
      });
      expect(res.statusCode).toBe(200);
    }
  });
});
