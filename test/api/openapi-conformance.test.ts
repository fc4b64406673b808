import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ADMIN, hwi, type Lab, makeLab, send } from "./helpers.ts";
import { type Conformance, checkAgainstDocument } from "./openapi-conformance.ts";

/**
 * A platform team generates clients from /docs/json: every answer the app gives must be one the
 * document declares for that operation (status, content type, body schema), or the generated
 * client takes a real answer for an unexpected one. makeLab (helpers.ts) runs the same check on
 * every answer of every API test.
 */
describe("answers against the OpenAPI document", () => {
  let lab: Lab;
  let conformance: Conformance;
  beforeEach(async () => {
    lab = await makeLab();
    conformance = checkAgainstDocument(lab.app);
  });
  afterEach(() => lab.close());

  it("documents the 400 a NUL (%00) in the path or query answers, on every route (README: Errors)", async () => {
    const patient = await send(lab.app, "GET", hwi(lab.dev, "hwi-patients/a%00b/"), lab.dev.key);
    expect(patient.statusCode).toBe(400);
    const account = await lab.app.inject({
      method: "GET",
      url: "/lab/v1/accounts/acme%00/",
      headers: ADMIN,
    });
    expect(account.statusCode).toBe(400);
    const types = await lab.app.inject({
      method: "GET",
      url: "/lab/v1/accounts/?x=%00",
      headers: ADMIN,
    });
    expect(types.statusCode).toBe(400);
    expect(conformance.checked()).toBe(3);
    expect(await conformance.violations()).toEqual([]);
  });

  it("documents 400, 413 and 415 on routes that take no body but parse one sent (README: Errors)", async () => {
    const text = { ...ADMIN, "content-type": "text/plain" };
    const json = { ...ADMIN, "content-type": "application/json" };
    const answers = await Promise.all([
      lab.app.inject({
        method: "POST",
        url: "/lab/v1/dead-letters/1/replay/",
        headers: text,
        payload: "x",
      }),
      lab.app.inject({
        method: "DELETE",
        url: "/lab/v1/dead-letters/1/",
        headers: json,
        payload: "{",
      }),
      lab.app.inject({
        method: "DELETE",
        url: `/lab/v1/accounts/acme/keys/${lab.prod.keyId}/`,
        headers: json,
        payload: "x".repeat(1024 * 1024 + 1),
      }),
      // A route that ignores its body (DRF's destroy) still has a JSON one read, up to 1 MiB.
      send(
        lab.app,
        "DELETE",
        hwi(lab.dev, "hwi-patients/p-1/"),
        lab.dev.key,
        "x".repeat(1024 * 1024),
      ),
    ]);
    expect(answers.map((res) => res.statusCode)).toEqual([415, 400, 413, 413]);
    expect(await conformance.violations()).toEqual([]);
  });

  it("validates the answers of a patient's life against their schemas", async () => {
    const body = { external_id: "p-1", first_name: "Ada", zip_code: "02139" };
    expect(
      (await send(lab.app, "POST", hwi(lab.dev, "hwi-patients/"), lab.dev.key, body)).statusCode,
    ).toBe(201);
    await send(lab.app, "POST", hwi(lab.dev, "hwi-patients/"), lab.dev.key, body);
    await send(lab.app, "GET", hwi(lab.dev, "hwi-patients/"), lab.dev.key);
    await send(lab.app, "GET", hwi(lab.dev, "hwi-patients/?page=9"), lab.dev.key);
    await send(lab.app, "PATCH", hwi(lab.dev, "hwi-patients/p-1/"), lab.dev.key, {
      sms_opt_in: false,
    });
    await send(lab.app, "DELETE", hwi(lab.dev, "hwi-patients/p-1/"), lab.dev.key);
    await send(lab.app, "GET", hwi(lab.dev, "hwi-patients/p-1/"), lab.dev.key);
    await send(lab.app, "GET", hwi(lab.dev, "hwi-patients/p-1/"), "rpm_dev_unknown");
    await lab.app.inject({ method: "GET", url: "/lab/v1/accounts/", headers: ADMIN });
    await lab.app.inject({ method: "GET", url: "/lab/v1/overview/", headers: ADMIN });
    expect(conformance.checked()).toBe(10);
    expect(await conformance.violations()).toEqual([]);
  });
});
