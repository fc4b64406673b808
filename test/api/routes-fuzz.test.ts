import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { InjectOptions, LightMyRequestResponse } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Rng } from "../../src/core/rng.ts";
import { ADMIN, apiKey, hwi, type Lab, makeLab, send } from "./helpers.ts";
import { BPM, GW, knownGateway, series } from "./hwi-fixtures.ts";

/**
 * Every route the app serves (collected from Fastify as it registers them, so a new route is
 * fuzzed without touching this file) gets requests of the wrong shape: bodies of the wrong JSON
 * type, invalid JSON and bytes that are not UTF-8, huge numbers, long strings, unknown fields,
 * duplicated or malformed query parameters, path ids of the wrong form. The rule (spec 7.1, 7.2):
 * never a 5xx; a 400 names the field (keyed by field) or the byte at fault (the JSON parse
 * error); a refused request leaves the store as it was.
 */

const RUNS_PER_ROUTE = 100;
/** GET /lab/v1/events/ is a server-sent event stream: it never ends, inject() would wait. */
const STREAMS = new Set(["/lab/v1/events/"]);

interface Route {
  readonly method: string;
  readonly url: string;
  readonly body: unknown;
  readonly queryFields: readonly string[];
}

/** A JSON text spliced in as is (numbers JSON.stringify cannot write, lone surrogates). */
class Raw {
  constructor(readonly text: string) {}
}

const GARBAGE_VALUES: readonly unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  2 ** 53 + 2,
  -(2 ** 63),
  1e308,
  new Raw("1e999"),
  new Raw("-1e999"),
  new Raw("123456789012345678901234567890"),
  "",
  "   ",
  "NaN",
  "-1",
  "Infinity",
  "1e999",
  "0x1F",
  "2024-13-45T25:61:00Z",
  "9999-12-31T23:59:59Z",
  "+275760-09-13T00:00:01Z",
  "0000-01-01",
  "true",
  "a\u0000b",
  new Raw('"\\ud800"'),
  "💥".repeat(40),
  "x".repeat(70_000),
  [],
  [1, "a", null],
  {},
  { nested: { deeper: [] } },
  [{}],
];

const GARBAGE_STRINGS: readonly string[] = [
  "",
  " ",
  "-1",
  "0",
  "NaN",
  "Infinity",
  "1e999",
  "99999999999999999999999999",
  "9007199254740993",
  "-9007199254740993",
  "1.5",
  "0x10",
  "true",
  "null",
  "[]",
  "{}",
  "2024-02-30",
  "2024-10-15T04:10:00+99:00",
  "9999-12-31T23:59:59Z",
  "0000-01-01T00:00:00Z",
  "1969-12-31T23:59:59Z",
  "+275760-09-13T00:00:01Z",
  "-000001-01-01T00:00:00Z",
  "2024-10-15T04:10:00.123456789Z",
  "2024-10-15 04:10",
  "1e15",
  "٣",
  "1000000",
  "x".repeat(5000),
  "💥",
  "a b",
  "__proto__",
  "constructor",
];

/** Path segments: raw URL text (already encoded, or deliberately not). */
const GARBAGE_SEGMENTS: readonly string[] = [
  "-1",
  "0",
  "NaN",
  "1e999",
  "99999999999999999999999999",
  "%ff",
  "%fe%ff",
  "%25",
  "%2e%2e",
  "%20",
  "a%20b",
  "x".repeat(999),
  "%F0%9F%92%A5",
  "null",
  "__proto__",
  "constructor",
  "00000000-0000-0000-0000-000000000000",
  "ZZZZZZZZZZZZ",
  "1.5",
  "true",
];

/** Bodies no JSON parser accepts, or not UTF-8, or otherwise hostile: raw bytes. */
const INVALID_BODIES: readonly Buffer[] = [
  Buffer.from('{"a":'),
  Buffer.from("{"),
  Buffer.from("[1,"),
  Buffer.from('{"a":1,}'),
  Buffer.from("{'a':1}"),
  Buffer.from("nul"),
  Buffer.from("NaN"),
  Buffer.from("\u00ef\u00bb\u00bf{}", "latin1"),
  Buffer.from([0xff, 0xfe, 0x7b, 0x7d]),
  Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]),
  Buffer.from('{"a":1,"a":2}'),
  Buffer.from("[".repeat(20_000) + "]".repeat(20_000)),
  Buffer.from('{"__proto__":{"x":1}}'),
  Buffer.from('"just a string"'),
];

function toJson(value: unknown): string {
  if (value instanceof Raw) return value.text;
  if (Array.isArray(value)) return `[${value.map(toJson).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value);
}

/** What a route schema part (zod, or JSON Schema where a service validates) says of a value. */
interface Shape {
  readonly fields?: Record<string, unknown>;
  readonly element?: unknown;
  readonly choices?: readonly unknown[];
}

function shapeOf(schema: unknown): Shape {
  if (typeof schema !== "object" || schema === null) return {};
  const s = schema as {
    shape?: Record<string, unknown>;
    properties?: Record<string, unknown>;
    items?: unknown;
    enum?: unknown[];
    anyOf?: unknown[];
    oneOf?: unknown[];
    def?: {
      innerType?: unknown;
      in?: unknown;
      schema?: unknown;
      element?: unknown;
      options?: unknown[];
      entries?: Record<string, unknown>;
      values?: unknown[];
    };
  };
  if (s.shape !== undefined && typeof s.shape === "object") return { fields: s.shape };
  if (s.properties !== undefined) return { fields: s.properties };
  if (s.items !== undefined) return { element: s.items };
  if (Array.isArray(s.enum)) return { choices: s.enum };
  if (s.def?.element !== undefined) return { element: s.def.element };
  if (s.def?.entries !== undefined) return { choices: Object.values(s.def.entries) };
  if (Array.isArray(s.def?.values)) return { choices: s.def.values };
  const inner = s.def?.innerType ?? s.def?.in ?? s.def?.schema;
  if (inner !== undefined) return shapeOf(inner);
  const options = s.def?.options ?? s.anyOf ?? s.oneOf;
  if (Array.isArray(options)) {
    const shapes = options.map(shapeOf);
    const fields = Object.assign({}, ...shapes.map((x) => x.fields ?? {}));
    return Object.keys(fields).length > 0 ? { fields } : (shapes.find((x) => x.element) ?? {});
  }
  return {};
}

function fieldsOf(schema: unknown): string[] {
  return Object.keys(shapeOf(schema).fields ?? {});
}

/** Values that pass many fields' checks, so garbage elsewhere reaches the services' own rules. */
const PLAUSIBLE: readonly unknown[] = [
  "P-1",
  "P-2",
  GW,
  BPM,
  "AAAAAAAAAAAA",
  "https://receiver.example/hook",
  "MEASUREMENT",
  "2024-10-15T04:10:00Z",
  "acme-dev",
  1,
  10,
  true,
];

/** A value for `schema`, wrong somewhere: the right shape with wrong leaves, or wrong outright. */
function garbageFor(rng: Rng, schema: unknown, depth = 0): unknown {
  const shape = shapeOf(schema);
  if (depth < 3 && shape.fields !== undefined && rng.chance(0.8)) {
    const object: Record<string, unknown> = {};
    for (const [field, child] of Object.entries(shape.fields)) {
      if (rng.chance(0.6)) object[field] = garbageFor(rng, child, depth + 1);
    }
    if (rng.chance(0.2)) object[`unknown_${rng.int(0, 9)}`] = rng.pick(GARBAGE_VALUES);
    return object;
  }
  if (depth < 3 && shape.element !== undefined && rng.chance(0.7)) {
    return Array.from({ length: rng.int(0, 3) }, () => garbageFor(rng, shape.element, depth + 1));
  }
  if (shape.choices !== undefined && shape.choices.length > 0 && rng.chance(0.5)) {
    return rng.pick(shape.choices);
  }
  return rng.chance(0.3) ? rng.pick(PLAUSIBLE) : rng.pick(GARBAGE_VALUES);
}

/** One random request of the wrong shape for `route`. */
function garbageRequest(
  rng: Rng,
  route: Route,
  pathValue: (name: string, url: string) => string[],
): { method: string; path: string; query: string; body?: Buffer; contentType?: string } {
  const path = route.url.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_m, name: string) =>
    rng.chance(0.75) ? rng.pick(pathValue(name, route.url)) : rng.pick(GARBAGE_SEGMENTS),
  );
  const query = garbageQuery(rng, route.queryFields);
  if (route.method === "GET" || route.method === "HEAD")
    return { method: route.method, path, query };
  const kind = rng.int(0, 5);
  if (kind === 0) return { method: route.method, path, query, body: rng.pick(INVALID_BODIES) };
  if (kind === 1) {
    const body = Buffer.from(toJson(rng.pick(GARBAGE_VALUES)));
    return { method: route.method, path, query, body };
  }
  const object = garbageFor(rng, route.body);
  const contentType = rng.pick([
    "application/json",
    "application/json",
    "application/json",
    "application/json; charset=latin1",
    "application/json; charset=utf-16le",
    "application/json; charset=bogus",
    "application/JSON",
    "application/json-patch+json",
    "text/plain",
    "multipart/form-data; boundary=x",
    "application/x-www-form-urlencoded",
  ]);
  return { method: route.method, path, query, body: Buffer.from(toJson(object)), contentType };
}

function garbageQuery(rng: Rng, fields: readonly string[]): string {
  if (rng.chance(0.3)) return "";
  const names = [...fields, "junk", "page", "page_size", "a[b]", "page[]", "__proto__", ""];
  const parts: string[] = [];
  for (let i = rng.int(1, 4); i > 0; i--) {
    const name = rng.pick(names);
    const value = rng.chance(0.15)
      ? rng.pick(["%ff", "%", "%zz", "a%c3%28"])
      : encodeURIComponent(rng.pick(GARBAGE_STRINGS));
    parts.push(`${name}=${value}`);
    // Duplicated parameter: DRF reads the last one; either way, never a 500.
    if (rng.chance(0.2)) parts.push(`${name}=${encodeURIComponent(rng.pick(GARBAGE_STRINGS))}`);
  }
  return parts.join("&");
}

/** Every table's rows, in a stable order: what a refused request must leave as it was. */
function snapshot(db: Database.Database): string {
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .pluck()
    .all() as string[];
  return JSON.stringify(
    tables.map((t) => [t, db.prepare(`SELECT * FROM "${t}" ORDER BY rowid`).raw().all()]),
    (_k, v) => (typeof v === "bigint" ? v.toString() : v),
  );
}

/** DRF's 400 body: messages (strings) per field, nested objects or lists of them for nesting. */
function isFieldErrors(value: unknown): boolean {
  if (Array.isArray(value)) {
    if (value.length === 0) return false;
    if (value.every((m) => typeof m === "string" && m !== "")) return true;
    return value.every((item) => typeof item === "object" && item !== null && !Array.isArray(item));
  }
  if (typeof value !== "object" || value === null) return false;
  const entries = Object.entries(value);
  return entries.length > 0 && entries.every(([, v]) => isFieldErrors(v));
}

/** The general 400s that name what is at fault without a field: the JSON or the URL's bytes. */
const GENERAL_400 = new RegExp(
  [
    "^JSON parse error - .+ at (byte|character) \\d+",
    "^JSON parse error - a __proto__ or constructor.prototype key is not accepted$",
    "^Null characters are not allowed",
    "^The (path|query string) is not a valid URL: .+",
  ].join("|"),
);

function describeRequest(req: { method: string; path: string; query: string; body?: Buffer }) {
  const body = req.body === undefined ? "" : ` body=${req.body.toString("latin1").slice(0, 300)}`;
  return `${req.method} ${req.path.slice(0, 300)}?${req.query.slice(0, 300)}${body}`;
}

describe("every route under requests of the wrong shape", () => {
  let lab: Lab;
  let dir: string;
  let db: Database.Database;
  const routes: Route[] = [];
  const pool: Record<string, string[]> = {};
  /** ASR is enabled on acme (production) only. */
  let asrDomain: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "rpmlab-routes-fuzz-"));
    lab = await makeLab({ store: `sqlite:${join(dir, "lab.db")}` });
    lab.app.addHook("onRoute", (route) => {
      for (const method of [route.method].flat()) {
        if (method === "HEAD" || route.url.startsWith("/docs")) continue;
        if (method === "GET" && STREAMS.has(route.url)) continue;
        routes.push({
          method,
          url: route.url,
          body: route.schema?.body,
          queryFields: fieldsOf(route.schema?.querystring),
        });
      }
    });
    await lab.app.ready();
    await knownGateway(lab);
    const device = await send(lab.app, "POST", hwi(lab.dev, "hwi-devices/"), lab.dev.key, {
      device: { name: BPM, hardware_uuid: "AAAAAAAAAAAA" },
      patient: { external_id: "P-1" },
    });
    expect(device.statusCode, device.body).toBe(201);
    const deviceId = device.json().id as string;
    await lab.store.measurements.insertMany(series(lab.dev, deviceId, 20, lab.clock.now()));
    const webhook = await send(lab.app, "POST", hwi(lab.dev, "webhooks/"), lab.dev.key, {
      endpoint: "https://receiver.example/hook",
      event: "MEASUREMENT",
    });
    expect(webhook.statusCode, webhook.body).toBe(201);
    const orders = await lab.app.inject({ method: "GET", url: "/lab/v1/orders/", headers: ADMIN });
    expect(orders.statusCode, orders.body).toBe(200);
    const orderIds = (orders.json() as { id: string }[]).map((o) => o.id);
    const dead = await lab.store.deadLetters.add({
      topic: `rpm/v1/gw/${GW}/up`,
      payload: Buffer.from('{"v":1,"message_id":"m-1"}'),
      reason: "E_MQTT_PAYLOAD: gateway_uuid: Invalid input",
      messageId: "m-1",
    });
    Object.assign(pool, {
      clientDomain: [lab.dev.account.clientDomain],
      externalId: ["P-1"],
      id: [deviceId, webhook.json().id as string, ...orderIds, String(dead.id)],
      gatewayUuid: [GW],
      hardware_uuid: ["AAAAAAAAAAAA", GW],
      key: ["anything"],
    });
    asrDomain = [lab.prod.account.clientDomain];
    db = new Database(join(dir, "lab.db"), { readonly: true });
  });
  afterAll(async () => {
    db?.close();
    await lab?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("collects the app's routes", () => {
    expect(routes.length).toBeGreaterThan(60);
    expect(routes.some((r) => r.url.startsWith("/lab/v1/"))).toBe(true);
    expect(routes.some((r) => r.url.includes("/asr/"))).toBe(true);
  });

  it("answers each without a 5xx, 400s naming the field or byte, the store unchanged on refusal", async () => {
    // One failure per route and kind, the first found: enough to reproduce each.
    const failures = new Map<string, string>();
    const statuses = new Map<number, number>();
    // FUZZ_SEED=… explores other inputs; the default seed keeps the run reproducible.
    const rng = new Rng(process.env.FUZZ_SEED ?? "routes-fuzz");
    for (const route of routes) {
      const routeRng = rng.fork(`${route.method} ${route.url}`);
      for (let run = 0; run < RUNS_PER_ROUTE; run++) {
        const req = garbageRequest(routeRng, route, (name, url) =>
          name === "clientDomain" && url.includes("/asr/") ? asrDomain : (pool[name] ?? ["x"]),
        );
        const before = snapshot(db);
        const res = await inject(lab, req);
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        const problem = check(res, before === snapshot(db));
        const key = `${problem} ${route.method} ${route.url}`;
        if (problem !== null && !failures.has(key)) {
          failures.set(key, `${problem}: ${describeRequest(req)} → ${res.body.slice(0, 300)}`);
        }
      }
    }
    expect([...failures.values()]).toEqual([]);
    // The requests reached the routes' own checks and their write paths, not only the parser.
    expect(statuses.get(400) ?? 0).toBeGreaterThan(500);
    expect(statuses.get(200) ?? 0).toBeGreaterThan(100);
  }, 600_000);
});

function inject(
  lab: Lab,
  req: { method: string; path: string; query: string; body?: Buffer; contentType?: string },
): Promise<LightMyRequestResponse> {
  const auth = req.path.startsWith("/lab/v1/")
    ? ADMIN
    : apiKey(req.path.startsWith("/clients/acme/") ? lab.prod.key : lab.dev.key);
  const url = req.query === "" ? req.path : `${req.path}?${req.query}`;
  return lab.app.inject({
    method: req.method as InjectOptions["method"],
    url,
    headers: {
      ...auth,
      ...(req.body === undefined ? {} : { "content-type": req.contentType ?? "application/json" }),
    },
    ...(req.body === undefined ? {} : { payload: req.body }),
  });
}

/** What is wrong with an answer, or null. */
function check(res: LightMyRequestResponse, storeUnchanged: boolean): string | null {
  if (res.statusCode >= 500) return `${res.statusCode}`;
  if (res.statusCode >= 400 && !storeUnchanged) return `${res.statusCode} changed the store`;
  if (res.statusCode !== 400) return null;
  let body: unknown;
  try {
    body = res.json();
  } catch {
    return "400 not JSON";
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return "400 not an object";
  const detail = (body as { detail?: unknown }).detail;
  if (typeof detail === "string") {
    return GENERAL_400.test(detail) ? null : "400 without the field at fault";
  }
  return isFieldErrors(body) ? null : "400 not keyed by field";
}
