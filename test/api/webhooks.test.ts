import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hwi, type Lab, makeLab, send } from "./helpers.ts";
import { type Envelope, hwiCall, ok } from "./hwi-fixtures.ts";

const KEYS = [
  "id",
  "created",
  "modified",
  "endpoint",
  "auth_header",
  "auth_key",
  "event",
  "post_as_array",
  "enabled_by_default",
  "signed",
  "signing_secret",
];

/** wire-formats "Webhook registry"; spec 6.1 kinds, 6.3.1 enabled_by_default. */
describe("webhooks/", () => {
  let lab: Lab;
  let call: ReturnType<typeof hwiCall>;
  beforeEach(async () => {
    lab = await makeLab();
    call = hwiCall(lab);
  });
  afterEach(() => lab.close());

  it("POST refuses a webhook past the account's 100 (each reading goes to every one): 400, until one is deleted", async () => {
    for (let i = 0; i < 100; i++) {
      await lab.store.webhooks.create(lab.dev.account.id, {
        endpoint: `https://client.example/hook/${i}`,
        event: "MEASUREMENT",
      });
    }
    const refused = await call("POST", "webhooks/", {
      endpoint: "https://client.example/one-more",
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({
      non_field_errors: [
        "This account already has 100 webhooks, the most it may hold: delete one first.",
      ],
    });
    expect(await lab.store.webhooks.list(lab.dev.account.id)).toHaveLength(100);
    // Another account's count is its own.
    const other = await send(lab.app, "POST", hwi(lab.other, "webhooks/"), lab.other.key, {
      endpoint: "https://other.example/hook",
    });
    expect(other.statusCode).toBe(201);
    const [first] = await lab.store.webhooks.list(lab.dev.account.id);
    expect((await call("DELETE", `webhooks/${first!.id}/`)).statusCode).toBe(204);
    const again = await call("POST", "webhooks/", { endpoint: "https://client.example/one-more" });
    expect(again.statusCode).toBe(201);
  });

  it("POST registers (201) with the defaults: MEASUREMENT, post_as_array false, enabled_by_default true", async () => {
    const res = await call("POST", "webhooks/", {
      endpoint: "https://client.example/measurements",
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(Object.keys(body)).toEqual(KEYS);
    expect(body).toEqual({
      id: body.id,
      created: "2024-10-16T04:10:00.000000Z",
      modified: "2024-10-16T04:10:00.000000Z",
      endpoint: "https://client.example/measurements",
      auth_header: null,
      auth_key: null,
      event: "MEASUREMENT",
      post_as_array: false,
      enabled_by_default: true,
      signed: false,
      signing_secret: null,
    });
    const full = await call("POST", "webhooks/", {
      endpoint: "http://127.0.0.1:9000/hook",
      auth_header: "Authorization",
      auth_key: "Bearer abc",
      event: "FULFILLMENT",
      post_as_array: "true",
      enabled_by_default: false,
    });
    expect(full.json()).toMatchObject({
      auth_header: "Authorization",
      auth_key: "Bearer abc",
      event: "FULFILLMENT",
      post_as_array: true,
      enabled_by_default: false,
    });
  });

  it("endpoint must be an http(s) URL: 400 keyed endpoint otherwise", async () => {
    for (const endpoint of [
      "ftp://client.example/x",
      "client.example/x",
      "https://",
      // Repaired by the WHATWG parser into another URL than the one written.
      "http:///127.0.0.1:8080/triple",
      "http:/client.example/x",
      "http:\\\\client.example\\x",
      "https://client.example\\x",
      "not a url",
      "",
    ]) {
      const res = await call("POST", "webhooks/", { endpoint });
      expect(res.statusCode, endpoint).toBe(400);
      expect(Object.keys(res.json())).toEqual(["endpoint"]);
    }
    expect((await call("POST", "webhooks/", { endpoint: "mailto:a@b.c" })).json()).toEqual({
      endpoint: ["Enter a valid URL."],
    });
    expect((await call("POST", "webhooks/", {})).json()).toEqual({
      endpoint: ["This field is required."],
    });
  });

  it("an object where a kind belongs is quoted as JSON, even one that overrides toString", async () => {
    const res = await call("POST", "webhooks/", {
      endpoint: "https://c.example/",
      event: { toString: false },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ event: ['"{"toString":false}" is not a valid choice.'] });
  });

  it("event is one of the four kinds; other fields keyed by field too", async () => {
    const res = await call("POST", "webhooks/", {
      endpoint: "https://c.example/",
      event: "DEVICE",
      post_as_array: "sometimes",
      auth_header: "Bad Header",
    });
    expect(res.json()).toEqual({
      event: ['"DEVICE" is not a valid choice.'],
      post_as_array: ["Must be a valid boolean."],
      auth_header: ["Enter a valid HTTP header name."],
    });
    expect(
      (await call("POST", "webhooks/", { endpoint: "https://c.example/", auth_key: "k" })).json(),
    ).toEqual({ auth_header: ["This field is required when auth_key is set."] });
    // A header name with no value was stored, and every POST then went without it, unsaid.
    const nameOnly = await call("POST", "webhooks/", {
      endpoint: "https://c.example/",
      auth_header: "Authorization",
    });
    expect(nameOnly.statusCode).toBe(400);
    expect(nameOnly.json()).toEqual({
      auth_key: ["This field is required when auth_header is set."],
    });
    expect(
      (
        await call("POST", "webhooks/", {
          endpoint: "https://c.example/",
          auth_header: "Authorization",
          auth_key: "",
        })
      ).json(),
    ).toEqual({ auth_key: ["This field is required when auth_header is set."] });
    // Headers that frame the request, or that rpmlab sets itself, in any case of letters.
    for (const name of [
      "Content-Length",
      "transfer-encoding",
      "Host",
      "Content-Type",
      "X-RPMLAB-DELIVERY",
    ]) {
      const reserved = await call("POST", "webhooks/", {
        endpoint: "https://c.example/",
        auth_header: name,
        auth_key: "k",
      });
      expect(reserved.statusCode).toBe(400);
      expect(reserved.json()).toEqual({
        auth_header: ["The lab sets this header itself on every POST: choose another name."],
      });
    }
    // A value no HTTP client can send (RFC 9110 field-value): refused, not failed at each POST.
    for (const auth_key of ["caf\u00e9\u0100", "tok\u0007en", "tok\u007fen", "Bearer \u2713"]) {
      const bad = await call("POST", "webhooks/", {
        endpoint: "https://c.example/",
        auth_header: "X-Token",
        auth_key,
      });
      expect(bad.statusCode).toBe(400);
      expect(Object.keys(bad.json())).toEqual(["auth_key"]);
    }
    const latin1 = await call("POST", "webhooks/", {
      endpoint: "https://c.example/",
      auth_header: "X-Token",
      auth_key: "Bearer caf\u00e9\tx",
    });
    expect(latin1.statusCode).toBe(201);
    for (const event of ["MEASUREMENT", "FULFILLMENT", "SPECIAL_ORDER", "PATIENT"]) {
      expect(
        (await call("POST", "webhooks/", { endpoint: "https://c.example/", event })).statusCode,
      ).toBe(201);
    }
  });

  it("GET list (flat, or the envelope with page) and GET one; other accounts see none", async () => {
    const a = (await call("POST", "webhooks/", { endpoint: "https://c.example/a" })).json();
    lab.advance(1000);
    const b = (await call("POST", "webhooks/", { endpoint: "https://c.example/b" })).json();
    expect(ok(await call("GET", "webhooks/"))).toEqual([a, b]);
    const page = ok<Envelope>(await call("GET", "webhooks/?page=2&page_size=1"));
    expect(page).toMatchObject({ count: 2, next: null, results: [b] });
    expect(page.previous).toMatch(/^http:\/\/localhost\/clients\/acme-dev\/hwi\/webhooks\/\?/);
    expect(ok(await call("GET", `webhooks/${a.id.toUpperCase()}/`))).toEqual(a);
    expect(ok(await hwiCall(lab, lab.other)("GET", "webhooks/"))).toEqual([]);
    const foreign = await hwiCall(lab, lab.other)("GET", `webhooks/${a.id}/`);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({ detail: "No Webhook matches the given query." });
  });

  it("PUT replaces (left-out fields return to defaults), PATCH changes what it sends", async () => {
    const created = (
      await call("POST", "webhooks/", {
        endpoint: "https://c.example/a",
        auth_header: "X-Token",
        auth_key: "s3cret",
        event: "PATIENT",
        post_as_array: true,
      })
    ).json();
    lab.advance(5000);
    const patched = await call("PATCH", `webhooks/${created.id}/`, { enabled_by_default: "no" });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toEqual({
      ...created,
      enabled_by_default: false,
      modified: "2024-10-16T04:10:05.000000Z",
    });
    const bad = await call("PATCH", `webhooks/${created.id}/`, { auth_header: null });
    expect(bad.json()).toEqual({ auth_header: ["This field is required when auth_key is set."] });
    const keyless = await call("PATCH", `webhooks/${created.id}/`, { auth_key: "" });
    expect(keyless.statusCode).toBe(400);
    expect(keyless.json()).toEqual({
      auth_key: ["This field is required when auth_header is set."],
    });
    const cleared = await call("PATCH", `webhooks/${created.id}/`, {
      auth_header: null,
      auth_key: null,
    });
    expect(cleared.json()).toMatchObject({ auth_header: null, auth_key: null });
    await call("PATCH", `webhooks/${created.id}/`, { auth_header: "X-Token", auth_key: "s3cret" });
    expect((await call("PATCH", `webhooks/${created.id}/`, { endpoint: "x" })).statusCode).toBe(
      400,
    );
    const replaced = await call("PUT", `webhooks/${created.id}/`, {
      endpoint: "https://c.example/b",
    });
    expect(replaced.json()).toMatchObject({
      id: created.id,
      created: created.created,
      endpoint: "https://c.example/b",
      auth_header: null,
      auth_key: null,
      event: "MEASUREMENT",
      post_as_array: false,
      enabled_by_default: true,
    });
    expect((await call("PUT", `webhooks/${created.id}/`, {})).json()).toEqual({
      endpoint: ["This field is required."],
    });
  });

  it("signing_secret (rpmlab's addition): true makes one, shown in that answer only; a string is your own; false turns signing off", async () => {
    const made = await call("POST", "webhooks/", {
      endpoint: "https://c.example/a",
      signing_secret: true,
    });
    expect(made.statusCode).toBe(201);
    expect(made.json()).toMatchObject({ signed: true });
    expect(made.json().signing_secret).toMatch(/^whsec_[0-9A-Za-z]{32}$/);
    const { id } = made.json();
    expect(ok(await call("GET", `webhooks/${id}/`))).toMatchObject({
      signed: true,
      signing_secret: null,
    });
    expect((await lab.store.webhooks.get(lab.dev.account.id, id))?.signingSecret).toBe(
      made.json().signing_secret,
    );
    // A PATCH of something else keeps the secret, and does not show it.
    const renamed = ok(await call("PATCH", `webhooks/${id}/`, { post_as_array: true }));
    expect(renamed).toMatchObject({ signed: true, signing_secret: null });
    const own = "my-own-secret-of-enough-length";
    expect(ok(await call("PATCH", `webhooks/${id}/`, { signing_secret: own }))).toMatchObject({
      signed: true,
      signing_secret: own,
    });
    expect(ok(await call("PATCH", `webhooks/${id}/`, { signing_secret: false }))).toMatchObject({
      signed: false,
      signing_secret: null,
    });
    for (const bad of ["short", "has a space in the middle of it", 42, ["x"]]) {
      const res = await call("PATCH", `webhooks/${id}/`, { signing_secret: bad });
      expect(res.statusCode, String(bad)).toBe(400);
      expect(Object.keys(res.json())).toEqual(["signing_secret"]);
    }
  });

  it("a signed webhook read and written back (PUT or PATCH of the GET body) stays signed with its secret", async () => {
    const made = await call("POST", "webhooks/", {
      endpoint: "https://c.example/a",
      signing_secret: true,
    });
    const { id, signing_secret: secret } = made.json();
    const stored = async () =>
      (await lab.store.webhooks.get(lab.dev.account.id, id))?.signingSecret;
    // Reads show the secret as null; writing that null back is no request to stop signing.
    const read = ok<Record<string, unknown>>(await call("GET", `webhooks/${id}/`));
    const put = ok(await call("PUT", `webhooks/${id}/`, { ...read, post_as_array: true }));
    expect(put).toMatchObject({ signed: true, signing_secret: null, post_as_array: true });
    expect(await stored()).toBe(secret);
    const again = ok<Record<string, unknown>>(await call("GET", `webhooks/${id}/`));
    const patched = ok(await call("PATCH", `webhooks/${id}/`, { ...again, event: "PATIENT" }));
    expect(patched).toMatchObject({ signed: true, signing_secret: null, event: "PATIENT" });
    expect(await stored()).toBe(secret);
    // false and "" still turn it off; a POST with null signs nothing.
    expect(ok(await call("PUT", `webhooks/${id}/`, { ...read, signing_secret: "" }))).toMatchObject(
      { signed: false },
    );
    const unsigned = await call("POST", "webhooks/", {
      endpoint: "https://c.example/b",
      signing_secret: null,
    });
    expect(unsigned.json()).toMatchObject({ signed: false, signing_secret: null });
  });

  it("DELETE answers 204 then 404; unknown ids are 404 on every method", async () => {
    const created = (await call("POST", "webhooks/", { endpoint: "https://c.example/a" })).json();
    const deleted = await call("DELETE", `webhooks/${created.id}/`);
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe("");
    for (const method of ["GET", "DELETE", "PATCH", "PUT"] as const) {
      const res = await call(method, `webhooks/${created.id}/`, { endpoint: "https://c.example/" });
      expect(res.statusCode, method).toBe(404);
    }
    expect(ok(await call("GET", "webhooks/"))).toEqual([]);
  });
});
