import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { POSTGRES_SHOWN, POSTGRES_URL, postgresHarness } from "../support/postgres.ts";
import { ADMIN, type Lab, makeLab, send } from "./helpers.ts";
import {
  ADDRESS,
  activate,
  BPM,
  DAY,
  GW,
  hwiCall,
  knownGateway,
  labServices,
  reading,
} from "./hwi-fixtures.ts";

/**
 * The same API requests over a SQLite file and over PostgreSQL answer the same (README
 * "Stores"): a team running the lab on PostgreSQL sees what the default store shows. Each case
 * drives one lab per dialect with tricky data (ties, case, Unicode, wildcards, NUL, long text,
 * JSON numbers) and compares every answer, status and body.
 */
const pgh = await postgresHarness("API answers: SQLite and PostgreSQL alike");

type Step = (lab: Lab) => Promise<unknown>;

/** What each request answered, in order, as a client sees it. */
async function answers(spec: string, steps: Step[]): Promise<unknown[]> {
  const lab = await makeLab({ store: spec });
  try {
    const seen: unknown[] = [];
    for (const step of steps) seen.push(await step(lab));
    return seen;
  } finally {
    await lab.close();
  }
}

/** A gateway id of its own per device (one device of a kind per gateway, spec 2.8). */
const gateway = (i: number) => `A0B1C2D3E4${i.toString(16).toUpperCase().padStart(2, "0")}`;

/** `n` characters of hex that a compressor cannot shorten (a hash chain, deterministic). */
function incompressible(n: number): string {
  let out = "";
  let block = "rpmlab";
  while (out.length < n) {
    block = createHash("sha256").update(block).digest("hex");
    out += block;
  }
  return out.slice(0, n);
}

/** The dev account's first device's id, as the list answers it. */
async function firstDevice(lab: Lab): Promise<string> {
  const list = await hwiCall(lab)("GET", "hwi-devices/");
  return (list.json() as { id: string }[])[0]?.id ?? "none";
}

/** GET of a path under the dev account's first device. */
const getOfDevice = (rest: string) => async (lab: Lab) =>
  get(`hwi-devices/${await firstDevice(lab)}/${rest}`)(lab);

const get = (path: string) => async (lab: Lab) => {
  const res = await hwiCall(lab)("GET", path);
  return { path, status: res.statusCode, body: res.body };
};

const post = (path: string, body: unknown) => async (lab: Lab) => {
  const res = await hwiCall(lab)("POST", path, body);
  lab.advance(0);
  return { path, status: res.statusCode, body: res.body };
};

/**
 * A database of this run's own whose text sorts and folds as ICU's en-US does: what a
 * platform team's server more likely has than this one's C.UTF-8 (the official image's
 * en_US.UTF-8; ICU since PostgreSQL 15). Undefined where the server cannot make one.
 */
async function icuDatabase(admin: pg.Client): Promise<string | undefined> {
  const name = `rpmlab_parity_${process.pid}_${randomBytes(4).toString("hex")}`;
  try {
    await admin.query(
      `create database "${name}" template template0 encoding 'UTF8' locale_provider icu icu_locale 'en-US' locale 'C.UTF-8'`,
    );
    return name;
  } catch (error) {
    console.warn(`no ICU en-US database on this server (${String(error)}): its case skipped`);
    return undefined;
  }
}

/** A store spec for a new schema in another database of POSTGRES_URL's server. */
function onDatabase(database: string, schema: string): string {
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${database}`;
  url.searchParams.set("schema", schema);
  return url.toString();
}

if (pgh !== undefined) {
  const dir = mkdtempSync(join(tmpdir(), "rpmlab-parity-"));
  const icu = await icuDatabase(pgh.admin);
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    if (icu !== undefined) await pgh.admin.query(`drop database if exists "${icu}" with (force)`);
    await pgh.close();
  });
  const targets: [string, () => string][] = [
    ["memory", () => "memory"],
    [`PostgreSQL ${POSTGRES_SHOWN}`, () => pgh.nextSpec().spec],
    ...(icu === undefined
      ? []
      : ([[`PostgreSQL ICU en-US ${icu}`, () => onDatabase(icu, `lab_${++n}`)]] as [
          string,
          () => string,
        ][])),
  ];
  let n = 0;
  const compare = async (steps: Step[]) => {
    const sqlite = await answers(`sqlite:${join(dir, `lab-${++n}.db`)}`, steps);
    for (const [name, spec] of targets) {
      const postgres = await answers(spec(), steps);
      expect(postgres, name).toEqual(sqlite);
    }
    return sqlite;
  };

  describe("API answers: SQLite and PostgreSQL alike", () => {
    it("patients with tricky texts: Unicode, wildcards, empty, long, NUL, lone surrogates", async () => {
      const names = [
        "ZOË Ünïcödé",
        "zoë",
        "100% real",
        "a_b",
        "ab",
        "back\\slash",
        "ΝΙΚΟΣ",
        "İstanbul",
        "emoji 👩‍⚕️",
        "",
        "x".repeat(20_000),
        "nul\u0000inside",
        "lone \ud800 surrogate",
      ];
      const steps: Step[] = names.map((name, i) =>
        post("hwi-patients/", { external_id: `P-${i}`, name, email: "", city: " " }),
      );
      steps.push(get("hwi-patients/"), get("hwi-patients/?page=2&page_size=3"));
      for (let i = 0; i < names.length; i++) steps.push(get(`hwi-patients/P-${i}/`));
      steps.push(get("hwi-patients/p-1/"));
      await compare(steps);
    });

    it("device search and filters: case, Unicode, wildcards, ties on the same millisecond", async () => {
      const steps: Step[] = [];
      const patients = ["Zoë", "ZOË", "50%", "a_b", "aXb", "Νίκος", "ΝΙΚΟΣ", "STRASSE", "straße"];
      patients.forEach((name, i) => {
        steps.push(post("hwi-patients/", { external_id: `E-${i}`, name }));
        steps.push(async (lab) => {
          // No clock move: every device is created on the same millisecond.
          const res = await hwiCall(lab)("POST", "hwi-devices/", {
            device: { name: i % 2 === 0 ? BPM : "Vendor Scale", hardware_uuid: gateway(i) },
            patient: { external_id: `E-${i}` },
          });
          return { status: res.statusCode };
        });
      });
      for (const term of [
        "zoë",
        "ZOE",
        "%",
        "_",
        "a_b",
        "\\",
        "νικοσ",
        "Νικος",
        "ss",
        "ß",
        "strasse",
        "e-1",
        "ë",
        "",
        "'",
      ]) {
        steps.push(get(`hwi-devices/?search=${encodeURIComponent(term)}`));
      }
      steps.push(
        get("hwi-devices/?page=1&page_size=4"),
        get("hwi-devices/?page=3&page_size=4"),
        get("hwi-devices/?patient__external_id=e-1"),
        get("hwi-devices/?patient__external_id=E-1"),
        get(`hwi-devices/?device__hardware_uuid=${GW.toLowerCase()}`),
        get(`hwi-devices/?device__hardware_uuid__iexact=${GW.toLowerCase()}`),
        get("hwi-devices/?status=SHIPPED"),
        get("hwi-devices/?status=active"),
      );
      await compare(steps);
    });

    it("device properties: key order, numbers, Unicode keys and values", async () => {
      const steps: Step[] = [
        async (lab) => {
          const device = await activate(lab, { device: { name: BPM, hardware_uuid: GW } });
          const services = labServices(lab);
          const a = lab.dev.account.id;
          for (const [key, value] of [
            ["b", "1.0"],
            ["a", "9007199254740993"],
            ["B", ""],
            ["é", "ZOË"],
            ["_", "%"],
            ["Z", "x".repeat(255)],
          ]) {
            await services.properties.set(a, device.id, { key: key ?? "", value: value ?? "" });
          }
          return device.id;
        },
        get("hwi-devices/"),
        getOfDevice("properties/"),
        getOfDevice("properties/%C3%A9/"),
        getOfDevice("properties/_/"),
        get("hwi-devices/?properties__key=_"),
        get("hwi-devices/?properties__value=%25"),
        get("hwi-devices/?properties__value=zoë"),
        get("hwi-devices/?properties__key=b&properties__value=1"),
      ];
      await compare(steps);
    });

    it("measurements: ties on one timestamp, fractional and big values, filter params", async () => {
      const steps: Step[] = [
        async (lab) => {
          const device = await activate(lab, {
            device: { name: BPM, hardware_uuid: GW },
            patient: { external_id: "P-1" },
          });
          const t = lab.clock.now() - DAY;
          await lab.store.measurements.insertMany([
            reading(lab.dev, device.id, { timestamp: t, value1: 1.0, measurementIndex: 3 }),
            reading(lab.dev, device.id, {
              timestamp: t,
              metric: "systolic",
              value1: 120.5,
              value2: 0.1 + 0.2,
              measurementIndex: 2,
              filterParams: { z: 1.0, a: 2 ** 64, m: "ë", n: null, e: "" },
            }),
            reading(lab.dev, device.id, {
              timestamp: t + 1,
              value1: 1e21,
              measurementIndex: 1,
              timezoneOffset: 5,
            }),
          ]);
          return device.id;
        },
        getOfDevice("measurements/"),
        getOfDevice("measurements/?page=1&page_size=2"),
        getOfDevice("measurements/?page=2&page_size=2"),
        get("patients/P-1/measurements/"),
        get("patients/p-1/measurements/"),
      ];
      await compare(steps);
    });

    it("supply requests: same-millisecond ties, search over texts, dates and numbers", async () => {
      const asr = (method: "GET" | "POST", path: string, body?: unknown) => async (lab: Lab) => {
        const res = await send(lab.app, method, `/clients/acme/asr/${path}`, lab.prod.key, body);
        return { path, status: res.statusCode, body: res.body };
      };
      const shipTo = (name: string, city: string) => ({
        shipping_name: name,
        shipping_address: "1 Main St",
        shipping_city: city,
        shipping_state: "CA",
        shipping_zip_code: "92614",
      });
      const steps: Step[] = [
        async (lab) => {
          await knownGateway(lab, GW);
          await activate(
            lab,
            {
              device: { name: "Vendor Glucometer", hardware_uuid: GW },
              patient: { external_id: "P-1", name: "Zoë", ...ADDRESS },
            },
            lab.prod,
          );
          return null;
        },
        asr("POST", "supply-requests/", {
          ...shipTo("ZOË_%", "Zürich"),
          supply_name: "Glucometer Test Strips (50)",
          gateway_id: GW,
        }),
        asr("POST", "supply-requests/", {
          ...shipTo("Νίκος", "İzmir"),
          supply_name: "AA Batteries (4)",
        }),
        asr("POST", "supply-requests/", {
          ...shipTo("a\\b", "ZURICH"),
          supply_name: "AA Batteries (4)",
        }),
      ];
      for (const term of [
        "zoë",
        "ZÜRICH",
        "_",
        "%",
        "\\",
        "ΝΊΚΟΣ",
        "izmir",
        "i̇zmir",
        "50",
        "2024-10-16T04:10",
        "04:10:01.000000Z",
        ".000000",
        "2024-10-16 04:10",
        "T04",
      ]) {
        steps.push(asr("GET", `supply-requests/?search=${encodeURIComponent(term)}`));
      }
      steps.push(asr("GET", "supply-requests/?page=1&page_size=2"));
      await compare(steps);
    });

    it("a NUL in a query or a path, which PostgreSQL text cannot hold", async () => {
      const admin = (path: string) => async (lab: Lab) => {
        const res = await lab.app.inject({ method: "GET", url: `/lab/v1/${path}`, headers: ADMIN });
        return { path, status: res.statusCode, body: res.body };
      };
      const steps: Step[] = [
        post("hwi-patients/", { external_id: "P-1", name: "a\u0000b" }),
        post("hwi-patients/", { external_id: "P-\u00002", name: "x" }),
        async (lab) => {
          await lab.store.deadLetters.add({
            topic: "rpm/v1/gw/297056120BD7/up\u0000",
            payload: new Uint8Array([0x7b]),
            reason: "r",
          });
          return null;
        },
        get("hwi-patients/"),
        get("hwi-patients/P-%00/"),
        get("hwi-devices/?search=%00"),
        get("hwi-devices/?patient__external_id=%00"),
        get("hwi-devices/?properties__key=%00"),
        get("hwi-devices/?properties__value=%00"),
        get("hwi-devices/?device__hardware_uuid=%00"),
        get("hwi-devices/?device__hardware_uuid__iexact=%00"),
        get("hwi-devices/?status=%00"),
        get("hwi-devices/%00/"),
        get("patients/%00/measurements/"),
        get("webhooks/%00/"),
        admin("dead-letters/?topic_prefix=rpm%00"),
        admin("dead-letters/?source=%00"),
        admin("dead-letters/?message_id=%00"),
        admin("accounts/%00/"),
        async (lab) => {
          const res = await send(
            lab.app,
            "GET",
            "/clients/acme/asr/supply-requests/?search=%00",
            lab.prod.key,
          );
          return { status: res.statusCode, body: res.body };
        },
      ];
      await compare(steps);
    });

    it("conflicts, renames in another case, and numbers out of a column's range", async () => {
      const lab =
        (method: "GET" | "POST" | "PATCH", path: string, body?: unknown) => async (l: Lab) => {
          const res = await l.app.inject({
            method,
            url: `/lab/v1/${path}`,
            headers: {
              ...ADMIN,
              ...(body === undefined ? {} : { "content-type": "application/json" }),
            },
            ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
          });
          return { path, status: res.statusCode, body: res.body };
        };
      const steps: Step[] = [
        post("hwi-patients/", { external_id: "Ab", name: "one" }),
        post("hwi-patients/", { external_id: "aB", name: "two" }),
        post("hwi-patients/", { external_id: "ab ", name: "three" }),
        async (l) => {
          const res = await hwiCall(l)("PUT", "hwi-patients/Ab/", { external_id: "AB", name: "x" });
          return { status: res.statusCode, body: res.body };
        },
        async (l) => {
          const res = await hwiCall(l)("PATCH", "hwi-patients/ab/", { external_id: "ab " });
          return { status: res.statusCode, body: res.body };
        },
        get("hwi-patients/"),
        lab("POST", "accounts/", { client_domain: "ACME", environment: "production" }),
        lab("POST", "accounts/", { client_domain: "acme-DEV", environment: "development" }),
        lab("POST", "accounts/", { client_domain: "zoë", environment: "development" }),
        lab("POST", "accounts/", { client_domain: "ZOË", environment: "development" }),
        lab("GET", "accounts/"),
        lab("PUT" as "PATCH", "accounts/acme/auto-reorder/", {
          strips_below: 2147483647,
          days_below: 2147483648,
        }),
        lab("PUT" as "PATCH", "accounts/acme/auto-reorder/", {
          strips_below: 2147483647,
          days_below: 1,
        }),
        lab("GET", "accounts/acme/auto-reorder/"),
        get("hwi-patients/?page=9007199254740991&page_size=1"),
        get("hwi-patients/?page=99999999999999999999&page_size=1"),
        get("hwi-devices/?page=9007199254740991&page_size=1000"),
        get("webhooks/?page=9007199254740991"),
        async (l) => {
          const res = await send(
            l.app,
            "GET",
            "/clients/acme/asr/supply-requests/?page=9007199254740991",
            l.prod.key,
          );
          return { status: res.statusCode, body: res.body };
        },
        lab("GET", "dead-letters/?page=9007199254740991&page_size=1"),
        lab("GET", "dead-letters/?since=0001-01-01T00:00:00&until=9999-12-31T23:59:59.999999"),
        lab("GET", "webhook-deliveries/?page=9007199254740991&page_size=1"),
      ];
      await compare(steps);
    });

    it("dead letters by source and topic prefix, for topics that are not ASCII", async () => {
      const admin = (path: string) => async (lab: Lab) => {
        const res = await lab.app.inject({ method: "GET", url: `/lab/v1/${path}`, headers: ADMIN });
        return { path, status: res.statusCode, body: res.body };
      };
      const topics = [
        "rpm/v1/gw/ıd/up",
        "rpm/v1/gw/straße/up",
        "rpm/v1/gw/éA/up",
        "rpm/v1/cell/ǅ1/up",
        "rpm/v1/gw/297056120bd7/up",
        "RPM/v1/gw/297056120BD7/up",
      ];
      const steps: Step[] = [
        async (lab) => {
          for (const topic of topics) {
            await lab.store.deadLetters.add({
              topic,
              payload: new Uint8Array([0x7b]),
              reason: "r",
            });
          }
          return null;
        },
      ];
      for (const source of [
        "ID",
        "ıd",
        "STRASSE",
        "straße",
        "ÉA",
        "éa",
        "ǆ1",
        "Ǆ1",
        "297056120BD7",
      ]) {
        steps.push(admin(`dead-letters/?source=${encodeURIComponent(source)}`));
      }
      for (const prefix of ["rpm/v1/gw/é", "rpm/v1/gw/É", "RPM", "rpm/v1/gw/STRASSE"]) {
        steps.push(admin(`dead-letters/?topic_prefix=${encodeURIComponent(prefix)}`));
      }
      const answered = (await compare(steps)) as ({ path: string; body: string } | null)[];
      const found = (source: string) =>
        (
          JSON.parse(
            answered.find((a) => a?.path === `dead-letters/?source=${encodeURIComponent(source)}`)!
              .body,
          ) as { topic: string }[]
        ).map((d) => d.topic);
      // Its id in any case, whatever the letters: found by the id the topic names.
      expect(found("ıd")).toEqual(["rpm/v1/gw/ıd/up"]);
      expect(found("éa")).toEqual(["rpm/v1/gw/éA/up"]);
      expect(found("Ǆ1")).toEqual(["rpm/v1/cell/ǅ1/up"]);
    });

    it("gateways: orderings with nulls and ties on one millisecond", async () => {
      const steps: Step[] = [
        async (lab) => {
          for (let i = 0; i < 5; i++) {
            await knownGateway(lab, gateway(i));
            const res = await hwiCall(lab)("POST", "hwi-devices/", {
              device: { name: BPM, hardware_uuid: gateway(i) },
            });
            if (res.statusCode !== 201) return res.body;
          }
          await lab.store.gateways.recordMeasurement(gateway(1), lab.clock.now() - DAY);
          await lab.store.gateways.recordMeasurement(gateway(3), lab.clock.now() - DAY);
          await lab.store.gateways.recordMeasurement(gateway(4), lab.clock.now() - 2 * DAY);
          return null;
        },
      ];
      for (const ordering of [
        "last_measurement",
        "-last_measurement",
        "assigned_on",
        "-shipped_on",
      ]) {
        steps.push(get(`hwi-gateways/?ordering=${ordering}`));
        steps.push(get(`hwi-gateways/?ordering=${ordering}&page=2&page_size=2`));
      }
      steps.push(get("hwi-gateways/?last_measurement__isnull=true"));
      const [setUp, first] = (await compare(steps)) as [unknown, { body: string }];
      expect(setUp).toBeNull();
      expect(JSON.parse(first.body)).toMatchObject({ count: 5 });
    });

    it("glucometer supplies: strips left and daily use from sums and counts", async () => {
      const asr = (method: "GET" | "PUT", path: string, body?: unknown) => async (lab: Lab) => {
        const res = await send(lab.app, method, `/clients/acme/asr/${path}`, lab.prod.key, body);
        return { path, status: res.statusCode, body: res.body };
      };
      const steps: Step[] = [
        async (lab) => {
          await knownGateway(lab, GW);
          const glucometer = await activate(
            lab,
            {
              device: { name: "Vendor Glucometer", hardware_uuid: GW },
              patient: { external_id: "P-1" },
            },
            lab.prod,
          );
          const now = lab.clock.now();
          await lab.store.measurements.insertMany(
            Array.from({ length: 7 }, (_, i) =>
              reading(lab.prod, glucometer.id, {
                deviceName: "Vendor Glucometer",
                metric: "glucose",
                value1: 110,
                timestamp: now - Math.floor((i * DAY) / 3) - 60_000,
                measurementIndex: i + 1,
                filterParams: { measurement_index: i + 1 },
              }),
            ),
          );
          return null;
        },
        asr("GET", `glucometer_supplies/${GW}/`),
        asr("PUT", `glucometer_supplies/${GW}/`, { estimated_strips_remaining: 2147483647 }),
        asr("GET", `glucometer_supplies/${GW}/`),
        asr("PUT", `glucometer_supplies/${GW}/`, { estimated_strips_remaining: 0 }),
        asr("GET", `glucometer_supplies/${GW.toLowerCase()}/`),
      ];
      const answered = (await compare(steps)) as (null | { status: number; body: string })[];
      expect(JSON.parse(answered[3]!.body)).toMatchObject({
        estimated_strips_remaining: 2147483647,
      });
    });

    it("very long texts in indexed fields: external ids, sensor ids, property keys", async () => {
      // Text that does not compress: PostgreSQL's index entries hold about 2,700 bytes after it.
      const long = incompressible(3000);
      const steps: Step[] = [
        post("hwi-patients/", { external_id: long }),
        post("hwi-devices/", { device: { name: BPM }, patient: { external_id: `${long}a` } }),
        post("hwi-devices/", {
          device: { name: "Vendor Inhaler Sensor", hardware_uuid: GW },
          sensor_id: long,
        }),
        post("hwi-devices/", { device: { name: BPM, hardware_uuid: long } }),
        post("webhooks/", { endpoint: `https://client.example/${"y".repeat(1900)}` }),
        get("hwi-patients/?page=1&page_size=10"),
        get(`hwi-devices/?patient__external_id=${long}a`),
      ];
      const answered = (await compare(steps)) as { status: number }[];
      // Refused by the API's field limits before any index sees them (a webhook's endpoint is
      // not indexed).
      expect(answered.map((a) => a.status).slice(0, 5)).toEqual([400, 400, 400, 400, 201]);
    });

    it("webhooks and lab views: same-millisecond ties and texts", async () => {
      const steps: Step[] = [
        post("webhooks/", { endpoint: "https://client.example/a?q=%25_" }),
        post("webhooks/", { endpoint: "https://client.example/B" }),
        post("webhooks/", { endpoint: "https://client.example/ë" }),
        get("webhooks/"),
        async (lab) => {
          const res = await lab.app.inject({
            method: "GET",
            url: "/lab/v1/accounts/",
            headers: ADMIN,
          });
          return { status: res.statusCode, body: res.body };
        },
      ];
      await compare(steps);
    });
  });
}
