import { afterEach, describe, expect, it } from "vitest";
import type { RoutePlugin } from "../../src/api/types.ts";
import { RpmlabError } from "../../src/core/errors.ts";
import { apiKey, hwi, type Lab, makeLab, send } from "./helpers.ts";

/** Routes that fail the way real bugs do, added to an app built by the same buildApp. */
const failing: RoutePlugin = async (app) => {
  app.get("/boom/", async () => {
    throw new Error("secret internals: connection string postgres://u:p@db/x");
  });
  app.get("/store-down/", async () => {
    throw new RpmlabError("E_STORE_UNAVAILABLE", "cannot reach the database");
  });
};

let lab: Lab;
afterEach(() => lab.close());

/** Spec 7.2/7.3 first checks: trailing slash, 404, 405, 415, 500. */
describe("transport behaviour", () => {
  it("301 to the slashed URL, keeping the query, before authentication", async () => {
    lab = await makeLab();
    const res = await lab.app.inject({
      method: "GET",
      url: `${hwi(lab.dev, "hwi-patients")}?page=2&page_size=10`,
    });
    expect(res.statusCode).toBe(301);
    expect(res.headers.location).toBe("/clients/acme-dev/hwi/hwi-patients/?page=2&page_size=10");
    expect(res.body).toBe("");
  });

  it("redirects every method and detail paths too", async () => {
    lab = await makeLab();
    for (const method of ["POST", "PUT", "PATCH", "DELETE"] as const) {
      const res = await send(lab.app, method, hwi(lab.dev, "hwi-patients/P-1"), lab.dev.key, {});
      expect(res.statusCode).toBe(301);
      expect(res.headers.location).toBe("/clients/acme-dev/hwi/hwi-patients/P-1/");
    }
  });

  it("a client following the redirect without its Authorization header gets 401", async () => {
    lab = await makeLab();
    const first = await send(lab.app, "GET", hwi(lab.dev, "hwi-patients"), lab.dev.key);
    expect(first.statusCode).toBe(301);
    // What HTTP clients do on a redirect to another URL: the credentials stay behind.
    const followed = await lab.app.inject({ method: "GET", url: first.headers.location as string });
    expect(followed.statusCode).toBe(401);
    const withKey = await lab.app.inject({
      method: "GET",
      url: first.headers.location as string,
      headers: apiKey(lab.dev.key),
    });
    expect(withKey.statusCode).toBe(200);
  });

  it("404 {detail} for a path no route knows, slashed or not", async () => {
    lab = await makeLab();
    for (const url of [hwi(lab.dev, "no-such-thing/"), hwi(lab.dev, "no-such-thing"), "/"]) {
      const res = await send(lab.app, "GET", url, lab.dev.key);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ detail: "Not found." });
    }
  });

  it("405 with an Allow header for a known path and another method", async () => {
    lab = await makeLab();
    const res = await send(lab.app, "POST", hwi(lab.dev, "hwi-patients/P-1/"), lab.dev.key, {});
    expect(res.statusCode).toBe(405);
    expect(res.json()).toEqual({ detail: 'Method "POST" not allowed.' });
    expect(res.headers.allow).toBe("GET, PUT, PATCH, DELETE, HEAD");
    const list = await send(lab.app, "DELETE", hwi(lab.dev, "hwi-patients/"), lab.dev.key);
    expect(list.statusCode).toBe(405);
    expect(list.headers.allow).toBe("GET, POST, HEAD");
  });

  it("405 comes after authentication, as DRF checks the method in the view", async () => {
    lab = await makeLab();
    const none = await send(lab.app, "POST", hwi(lab.dev, "hwi-patients/P-1/"), null, {});
    expect(none.statusCode).toBe(401);
    const other = await send(lab.app, "POST", hwi(lab.dev, "hwi-patients/P-1/"), lab.other.key, {});
    expect(other.statusCode).toBe(403);
  });

  it("415 for a body that is not JSON, in DRF's words", async () => {
    lab = await makeLab();
    const url = hwi(lab.dev, "hwi-patients/");
    const cases = [
      { type: "text/plain", payload: '{"external_id": "P-1"}' },
      { type: "application/x-www-form-urlencoded", payload: "external_id=P-1" },
      { type: "application/xml", payload: "<patient/>" },
    ];
    for (const { type, payload } of cases) {
      const res = await lab.app.inject({
        method: "POST",
        url,
        headers: { ...apiKey(lab.dev.key), "content-type": type },
        payload,
      });
      expect(res.statusCode).toBe(415);
      expect(res.json()).toEqual({ detail: `Unsupported media type "${type}" in request.` });
    }
    await send(lab.app, "POST", url, lab.dev.key, { external_id: "P-1" });
    const untyped = await lab.app.inject({
      method: "PATCH",
      url: hwi(lab.dev, "hwi-patients/P-1/"),
      headers: apiKey(lab.dev.key),
      payload: Buffer.from('{"name": "x"}'),
    });
    expect(untyped.statusCode).toBe(415);
  });

  it("a detail route looks its object up before it reads the body: 404 first, as DRF views do", async () => {
    lab = await makeLab();
    const known = await send(lab.app, "POST", hwi(lab.dev, "hwi-patients/"), lab.dev.key, {
      external_id: "P-1",
    });
    expect(known.statusCode).toBe(201);
    const unknownDevice = "0b8f3c1e-6f1a-4c1e-9a53-0a1b2c3d4e5f";
    const unknownWebhook = "5d0c7a8e-2b4f-4e7a-8c1d-9e8f7a6b5c4d";
    const routes = [
      ["PATCH", "hwi-patients/NOPE/", "No Patient matches the given query."],
      ["PUT", "hwi-patients/NOPE/", "No Patient matches the given query."],
      ["PUT", `hwi-devices/${unknownDevice}/`, "No Device matches the given query."],
      ["POST", `hwi-devices/${unknownDevice}/properties/`, "No Device matches the given query."],
      ["PUT", `hwi-devices/${unknownDevice}/properties/`, "No Device matches the given query."],
      ["PUT", `webhooks/${unknownWebhook}/`, "No Webhook matches the given query."],
      ["PATCH", `webhooks/${unknownWebhook}/`, "No Webhook matches the given query."],
    ] as const;
    const bodies = [
      { type: "application/json", payload: '{"external_id": ' },
      { type: "text/plain", payload: "external_id=P-2" },
      { type: "application/json", payload: '{"external_id": "", "endpoint": "not a url"}' },
    ];
    for (const [method, path, detail] of routes) {
      for (const { type, payload } of bodies) {
        const res = await lab.app.inject({
          method,
          url: hwi(lab.dev, path),
          headers: { ...apiKey(lab.dev.key), "content-type": type },
          payload,
        });
        expect(`${method} ${path} ${type}: ${res.statusCode}`).toBe(
          `${method} ${path} ${type}: 404`,
        );
        expect(res.json()).toEqual({ detail });
      }
      // Authentication still comes first.
      const anonymous = await send(lab.app, method, hwi(lab.dev, path), null, {});
      expect(anonymous.statusCode).toBe(401);
    }
    // A known patient's body is read and checked as before.
    const invalid = await send(lab.app, "PATCH", hwi(lab.dev, "hwi-patients/p-1/"), lab.dev.key, {
      external_id: "",
    });
    expect(invalid.statusCode).toBe(400);
    expect(Object.keys(invalid.json())).toEqual(["external_id"]);
  });

  it("a route that reads no body ignores one, whatever its type: DELETE deletes (204), as DRF's destroy never parses request.data", async () => {
    lab = await makeLab();
    const call = (method: "POST" | "DELETE", path: string, body?: unknown) =>
      send(lab.app, method, hwi(lab.dev, path), lab.dev.key, body);
    const bodies = [
      { type: "application/x-www-form-urlencoded", payload: "" },
      { type: "application/x-www-form-urlencoded", payload: "reason=gone" },
      { type: "text/plain", payload: "delete it" },
      { type: "application/json", payload: '{"reason": ' },
    ];
    for (const [i, { type, payload }] of bodies.entries()) {
      expect((await call("POST", "hwi-patients/", { external_id: `P-${i}` })).statusCode).toBe(201);
      const device = (
        await call("POST", "hwi-devices/", { device: { name: "Vendor Scale" } })
      ).json() as { id: string };
      const props = `hwi-devices/${device.id}/properties/`;
      expect((await call("POST", props, { key: "colour", value: "red" })).statusCode).toBe(201);
      const hook = (await call("POST", "webhooks/", { endpoint: "https://c.example/m" })).json();
      for (const path of [`hwi-patients/P-${i}/`, `${props}colour/`, `webhooks/${hook.id}/`]) {
        const res = await lab.app.inject({
          method: "DELETE",
          url: hwi(lab.dev, path),
          headers: { ...apiKey(lab.dev.key), "content-type": type },
          payload,
        });
        expect(`${path} ${type}: ${res.statusCode} ${res.body}`).toBe(`${path} ${type}: 204 `);
      }
    }
    // Routes that read a body still refuse what is not JSON.
    const form = await lab.app.inject({
      method: "POST",
      url: hwi(lab.dev, "hwi-patients/"),
      headers: { ...apiKey(lab.dev.key), "content-type": "application/x-www-form-urlencoded" },
      payload: "external_id=P-9",
    });
    expect(form.statusCode).toBe(415);
  });

  it("accepts JSON with a charset parameter", async () => {
    lab = await makeLab();
    const res = await lab.app.inject({
      method: "POST",
      url: hwi(lab.dev, "hwi-patients/"),
      headers: { ...apiKey(lab.dev.key), "content-type": "application/json; charset=utf-8" },
      payload: '{"external_id": "P-1"}',
    });
    expect(res.statusCode).toBe(201);
  });

  it("decodes the body in the charset it declares; bytes it cannot decode are a 400, an unknown charset a 415", async () => {
    lab = await makeLab();
    const post = (contentType: string, payload: Buffer) =>
      lab!.app.inject({
        method: "POST",
        url: hwi(lab!.dev, "hwi-patients/"),
        headers: { ...apiKey(lab!.dev.key), "content-type": contentType },
        payload,
      });
    const latin1 = Buffer.from('{"external_id": "P-1", "name": "Jos\xe9 Pe\xf1a"}', "latin1");
    const named = await post("application/json; charset=iso-8859-1", latin1);
    expect(named.statusCode).toBe(201);
    expect(named.json().name).toBe("José Peña");
    // The same bytes as UTF-8 (declared or by default): not stored with U+FFFD in their place.
    for (const type of ["application/json", "application/json; charset=utf-8"]) {
      const refused = await post(type, latin1);
      expect(refused.statusCode).toBe(400);
      expect(refused.json()).toEqual({
        detail: expect.stringMatching(/^JSON parse error - the body is not utf-8 text at byte 35$/),
      });
    }
    // In another charset too the 400 names the byte where the character at fault starts.
    const utf16 = "application/json; charset=utf-16le";
    const odd = await post(utf16, Buffer.from('{"a":1}'));
    expect(odd.json()).toEqual({
      detail: "JSON parse error - the body is not utf-16le text at byte 6",
    });
    const surrogate = Buffer.concat([
      Buffer.from('{"a":"', "utf16le"),
      Buffer.from([0x00, 0xd8]),
      Buffer.from('x"}', "utf16le"),
    ]);
    expect((await post(utf16, surrogate)).json()).toEqual({
      detail: "JSON parse error - the body is not utf-16le text at byte 12",
    });
    const unknown = await post("application/json; charset=klingon", Buffer.from("{}"));
    expect(unknown.statusCode).toBe(415);
    expect((await lab.store.patients.list(lab.dev.account.id, { count: true })).total).toBe(1);
  });

  it("400 {detail} for malformed JSON (DRF's ParseError)", async () => {
    lab = await makeLab();
    const res = await lab.app.inject({
      method: "POST",
      url: hwi(lab.dev, "hwi-patients/"),
      headers: { ...apiKey(lab.dev.key), "content-type": "application/json" },
      payload: '{"external_id": ',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toMatch(/^JSON parse error - /);
  });

  it("malformed JSON: the 400 names what is wrong and at which byte, the character there escaped", async () => {
    lab = await makeLab();
    const post = (payload: Buffer, contentType = "application/json") =>
      lab!.app.inject({
        method: "POST",
        url: hwi(lab!.dev, "hwi-patients/"),
        headers: { ...apiKey(lab!.dev.key), "content-type": contentType },
        payload,
      });
    // V8 said "Unexpected end of JSON input" and '"NaN" is not valid JSON': no position; and its
    // "position" counts UTF-16 code units, not the bytes a client sent.
    const cases = [
      ['{"external_id": ', "value expected at byte 16, its end"],
      ["NaN", 'invalid symbol at byte 0 ("N")'],
      ['{"é": 1,}', 'property name expected at byte 9 ("}")'],
      ['\uFEFF{"external_id": tru}', 'invalid symbol at byte 19 ("t")'],
      ['{"external_id": "P-1"} \u001b[2J', 'invalid symbol at byte 23 ("\\u001b")'],
    ] as const;
    for (const [body, where] of cases) {
      const res = await post(Buffer.from(body));
      expect(res.statusCode, body).toBe(400);
      expect(res.json(), body).toEqual({ detail: `JSON parse error - ${where}` });
    }
    // In a declared single-byte charset a byte is a character; in UTF-16 one is not: characters.
    const latin1 = await post(
      Buffer.from('{"\xe9": 1,}', "latin1"),
      "application/json; charset=latin1",
    );
    expect(latin1.json()).toEqual({
      detail: 'JSON parse error - property name expected at character 8 ("}")',
    });
    // Characters, not UTF-16 code units: the emoji before the fault counts one.
    const utf16 = await post(
      Buffer.from('{"\u{1F4A5}": 1,}', "utf16le"),
      "application/json; charset=utf-16le",
    );
    expect(utf16.json()).toEqual({
      detail: 'JSON parse error - property name expected at character 8 ("}")',
    });
    expect((await lab.store.patients.list(lab.dev.account.id, { count: true })).total).toBe(0);
  });

  it("refuses a __proto__ key instead of parsing it", async () => {
    lab = await makeLab();
    const res = await lab.app.inject({
      method: "POST",
      url: hwi(lab.dev, "hwi-patients/"),
      headers: { ...apiKey(lab.dev.key), "content-type": "application/json" },
      payload: '{"external_id": "P-1", "__proto__": {"admin": true}}',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toBe(
      "JSON parse error - a __proto__ or constructor.prototype key is not accepted",
    );
  });

  it("an empty body, typed or not, is validated as {}: required fields reported", async () => {
    lab = await makeLab();
    const url = hwi(lab.dev, "hwi-patients/");
    for (const headers of [{ "content-type": "application/json" }, {}]) {
      const res = await lab.app.inject({
        method: "POST",
        url,
        headers: { ...apiKey(lab.dev.key), ...headers },
        payload: "",
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ external_id: ["This field is required."] });
    }
  });

  it("a path the router cannot decode answers {detail} naming the bad escape, with its id", async () => {
    lab = await makeLab();
    const cases = [
      ["%FF", 400, '"%FF" is not a percent-encoded UTF-8 sequence'],
      ["caf%C3", 400, '"%C3" is not a percent-encoded UTF-8 sequence'],
      ["x".repeat(1001), 414, "A path segment is too long."],
    ] as const;
    for (const [segment, status, detail] of cases) {
      const res = await send(lab.app, "GET", hwi(lab.dev, `hwi-patients/${segment}/`), lab.dev.key);
      expect(res.statusCode).toBe(status);
      expect(Object.keys(res.json())).toEqual(["detail"]);
      expect(res.json().detail).toContain(detail);
      expect(res.headers["x-request-id"]).toMatch(/^req-/);
    }
  });

  it("a NUL (%00) in a path id or a query value is 400 before any query, after authentication", async () => {
    lab = await makeLab();
    for (const url of [
      hwi(lab.prod, "hwi-devices/?search=%00"),
      hwi(lab.prod, "hwi-patients/a%00b/"),
      "/clients/acme/asr/supply-requests/?search=x%00",
      "/clients/acme/asr/glucometer_supplies/a%00b/",
    ]) {
      const res = await send(lab.app, "GET", url, lab.prod.key);
      expect(res.statusCode, url).toBe(400);
      expect(res.json()).toEqual({ detail: "Null characters are not allowed (%00 in the URL)." });
    }
    expect(
      (await send(lab.app, "GET", hwi(lab.prod, "hwi-devices/?search=%00"), null)).statusCode,
    ).toBe(401);
  });

  it("names every answer with an X-Request-Id", async () => {
    lab = await makeLab();
    const a = await send(lab.app, "GET", hwi(lab.dev, "hwi-patients/"), lab.dev.key);
    const b = await send(lab.app, "GET", hwi(lab.dev, "nothing/"), lab.dev.key);
    expect(a.headers["x-request-id"]).toMatch(/^req-/);
    expect(b.headers["x-request-id"]).toMatch(/^req-/);
    expect(a.headers["x-request-id"]).not.toBe(b.headers["x-request-id"]);
  });
});

describe("500", () => {
  it("answers {detail, request_id}, hides the error, and logs it under that id", async () => {
    lab = await makeLab({ extraRoutes: { hwi: [failing] }, log: true });
    const res = await send(lab.app, "GET", hwi(lab.dev, "boom/"), lab.dev.key);
    expect(res.statusCode).toBe(500);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(["detail", "request_id"]);
    expect(body.request_id).toBe(res.headers["x-request-id"]);
    expect(res.body).not.toContain("secret internals");
    const logged = lab.logs
      .map((line) => JSON.parse(line))
      .find((entry) => entry.level === 50 && entry.request_id === body.request_id);
    expect(logged?.err?.message).toContain("secret internals");
  });

  it("an unreachable store is a 500 too (spec 7.2 names no 503)", async () => {
    lab = await makeLab({ extraRoutes: { hwi: [failing] } });
    const res = await send(lab.app, "GET", hwi(lab.dev, "store-down/"), lab.dev.key);
    expect(res.statusCode).toBe(500);
    expect(res.json().request_id).toMatch(/^req-/);
  });
});
