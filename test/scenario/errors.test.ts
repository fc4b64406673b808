import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { DEFAULT_FULFILMENT_CONFIG } from "../../src/config/fulfilment-config.ts";
import { isRpmlabError } from "../../src/core/errors.ts";
import { checkScenario, defaultLibrary, parseScenario } from "../../src/scenario/load.ts";

const library = defaultLibrary();
const FILE = "scenarios/drill.yaml";

/** A scenario as YAML would hold it; the cases write keys and values the schema refuses. */
// biome-ignore lint/suspicious/noExplicitAny: a case may break any field, typed or not
type Draft = Record<string, any>;

/** A small valid scenario; each case breaks one thing in a copy of it. */
function base(): Draft {
  return {
    scenario: "drill",
    seed: 1,
    clock: { start: "2026-01-05T06:00:00Z" },
    duration: "3d",
    accounts: [
      {
        id: "clinic",
        webhooks: [
          { id: "main", events: ["MEASUREMENT"], url: "lab" },
          { id: "ext", events: ["PATIENT"], url: "https://hooks.example.com/rpm" },
        ],
      },
    ],
    cohorts: [
      {
        id: "htn",
        account: "clinic",
        count: 5,
        model: "hypertensive",
        kit: ["Vendor BPM - Wide Range", "Vendor Scale"],
        connectivity: "gateway",
      },
      {
        id: "cell",
        account: "clinic",
        count: 2,
        model: "normal",
        kit: ["Vendor Cellular BPM"],
        connectivity: "cellular",
      },
    ],
    events: [
      { at: "1d 09:30", action: "gateway.outage", target: "htn[0-4]", for: "6h" },
      { at: "36h", action: "cellular.outage", target: "cell", for: "2h" },
      { at: "2d", action: "webhook.down", webhook: "main", for: "1h" },
    ],
    expect: [
      { readings: { missing: 0, stored: ">= 10" } },
      { webhooks: { kind: "MEASUREMENT", count: ">= 10", webhook: "main" } },
      { api: { account: "clinic", get: "/hwi/hwi-patients/?page=1", count: 7 } },
    ],
  };
}

/** The problems of a broken copy, as `path: message` lines (file checked separately). */
function problems(change: (s: Draft) => void, file = FILE): string[] {
  const scenario = base();
  change(scenario);
  const result = checkScenario(stringify(scenario), file, library);
  if (result.ok) return [];
  for (const issue of result.issues) expect(issue.file).toBe(file);
  return result.issues.map((i) => `${i.path}: ${i.message}`);
}

describe("scenario errors name the file and the path", () => {
  it("the base scenario is valid", () => {
    expect(problems(() => {})).toEqual([]);
  });

  it("throws one E_SCENARIO_INVALID listing every problem as file:line:column: path: message", () => {
    const broken = base();
    broken.clock.speed = 0;
    broken.cohorts[0].kit.push("Vendor Toaster");
    let caught: unknown;
    try {
      parseScenario(stringify(broken), FILE, library);
    } catch (error) {
      caught = error;
    }
    expect(isRpmlabError(caught) && caught.code).toBe("E_SCENARIO_INVALID");
    expect((caught as Error).message).toMatch(/\nscenarios\/drill\.yaml:\d+:\d+: clock\.speed: /);
  });

  it("unknown keys, at their own path", () => {
    expect(
      problems((s) => {
        s.clock.sped = 2;
        s.cohorts[1].devices = [];
        s.events[0].duration = "1h";
        s.expect[0].readings.lost = 0;
      }),
    ).toEqual([
      "clock.sped: unknown key",
      "cohorts[1].devices: unknown key",
      "events[0].duration: unknown key",
      "expect[0].readings.lost: unknown key",
    ]);
  });

  it("an account's asr.auto_reorder needs a threshold", () => {
    expect(problems((s) => (s.accounts[0].asr = { auto_reorder: { strips_below: 20 } }))).toEqual(
      [],
    );
    expect(problems((s) => (s.accounts[0].asr = {}))).toEqual([]);
    expect(
      problems((s) => (s.accounts[0].asr = { auto_reorder: { supply_name: "Lancets (100)" } })),
    ).toEqual(["accounts[0].asr.auto_reorder: set strips_below, days_below or both"]);
  });

  it("an asr.auto_reorder the lab admin API would refuse, at its key", () => {
    // Accepted before: the run failed once started, E_SCENARIO_FAILED "auto_reorder refused".
    const at = "accounts[0].asr.auto_reorder";
    expect(
      problems(
        (s) =>
          (s.accounts[0].asr = { auto_reorder: { strips_below: 5, supply_name: "Lancets (100)" } }),
      ),
    ).toEqual([
      `${at}.supply_name: "Lancets (100)" is not a test strip supply (asr/supply-types/).`,
    ]);
    expect(
      problems(
        (s) =>
          (s.accounts[0].asr = {
            auto_reorder: { days_below: 5, supply_name: "Glucometer Test Strips (25)" },
          }),
      ),
    ).toEqual([
      `${at}.supply_name: "Glucometer Test Strips (25)" is deprecated and can no longer be ordered.`,
    ]);
    expect(
      problems((s) => (s.accounts[0].asr = { auto_reorder: { strips_below: 5_000_000_000 } })),
    ).toEqual([`${at}.strips_below: Too big: expected number to be <=2147483647`]);
    expect(
      problems(
        (s) =>
          (s.accounts[0].asr = {
            auto_reorder: { days_below: 5, supply_name: "Glucometer Test Strips (100)" },
          }),
      ),
    ).toEqual([]);
  });

  it("checkin_every: a gateway cohort's, from 1m to 1h", () => {
    expect(problems((s) => (s.cohorts[0].checkin_every = "1h"))).toEqual([]);
    expect(problems((s) => (s.cohorts[0].checkin_every = "1m"))).toEqual([]);
    const range =
      "from 1m to 1h: the service reports a gateway silent for over an hour with signal 0";
    expect(problems((s) => (s.cohorts[0].checkin_every = "59s"))).toEqual([
      `cohorts[0].checkin_every: ${range}`,
    ]);
    expect(problems((s) => (s.cohorts[0].checkin_every = "61m"))).toEqual([
      `cohorts[0].checkin_every: ${range}`,
    ]);
    expect(problems((s) => (s.cohorts[0].checkin_every = "often"))).toEqual([
      "cohorts[0].checkin_every: expected a duration such as 30d, 12h, 90m, 1.5d",
    ]);
    expect(problems((s) => (s.cohorts[1].checkin_every = "15m"))).toEqual([
      "cohorts[1].checkin_every: only a gateway cohort checks in; cellular devices connect when they have readings to send",
    ]);
  });

  it("fulfilment: the simulator's settings, each checked at its key and applied over the defaults", () => {
    const scenario = base() as Draft & { fulfilment?: unknown };
    scenario.fulfilment = {
      durations: { in_transit: "1d..2d" },
      probabilities: { carrier_hold: 0 },
    };
    const parsed = parseScenario(stringify(scenario), FILE, library);
    expect(parsed.fulfilment.durations.inTransit).toEqual({
      minMs: 86_400_000,
      maxMs: 172_800_000,
    });
    expect(parsed.fulfilment.probabilities.carrierHold).toBe(0);
    // The rest are the defaults, as `rpmlab serve` has them.
    expect(parsed.fulfilment.durations.processing).toEqual(
      DEFAULT_FULFILMENT_CONFIG.durations.processing,
    );
    expect(parseScenario(stringify(base()), FILE, library).fulfilment).toEqual(
      DEFAULT_FULFILMENT_CONFIG,
    );
    expect(
      problems((s) => {
        (s as { fulfilment?: unknown }).fulfilment = {
          durations: { in_transit: "soon" },
          probabilities: { carrier_hold: 2 },
          carrier: "ups",
        };
      }),
    ).toEqual([
      'fulfilment.durations.in_transit: "soon" is not a duration or a range of them, e.g. 4h, 1.5d, 2d..5d (units ms, s, m, h, d)',
      "fulfilment.probabilities.carrier_hold: must be a number from 0 to 1, got 2",
      "fulfilment.carrier: unknown key",
    ]);
  });

  it("missing required fields", () => {
    expect(
      problems((s) => {
        delete s.seed;
        delete s.cohorts[0].model;
      }),
    ).toEqual(["seed: required", "cohorts[0].model: required"]);
  });

  it("a malformed `at`", () => {
    const [problem] = problems((s) => {
      s.events[1].at = "2d 25:00";
    });
    expect(problem).toMatch(/^events\[1\]\.at: expected "Nd HH:MM"/);
  });

  it("an event at or after the end of the run, or before clock.start", () => {
    // Day 3 at 00:00 is 66 h after a 06:00 start: still within 3 days.
    expect(problems((s) => (s.events[0].at = "3d 00:00"))).toEqual([]);
    expect(
      problems((s) => {
        s.events[0].at = "3d 06:00";
        s.events[1].at = "72h";
        s.events.push({ at: "4d 09:30", action: "broker.restart" });
        s.events[2].at = "05:59";
      }),
    ).toEqual([
      'events[0].at: "3d 06:00" is at the end of the run (duration 3d)',
      'events[1].at: "72h" is at the end of the run (duration 3d)',
      'events[2].at: "05:59" is before clock.start',
      'events[3].at: "4d 09:30" is after the end of the run (duration 3d)',
    ]);
  });

  it("a malformed selector, an unknown cohort, indexes past the count", () => {
    expect(
      problems((s) => {
        s.events[0].target = "htn[x]";
      })[0],
    ).toMatch(/^events\[0\]\.target: expected a cohort id/);
    expect(
      problems((s) => {
        s.events[0].target = "htn[4-0]";
      }),
    ).toEqual(["events[0].target: the range runs backwards: write [a-b] with a ≤ b"]);
    expect(
      problems((s) => {
        s.events[0].target = "chf[0]";
        s.events[1].target = "cell[2]";
      }),
    ).toEqual([
      'events[0].target: no cohort "chf" in cohorts',
      'events[1].target: "cell[2]" reaches past the last patient of cell (count 2: cell[0-1])',
    ]);
  });

  it("targets checked against a cohort that has errors of its own, all reported at once", () => {
    expect(
      problems((s) => {
        s.cohorts[1].kit = ["Vendor Toaster"];
        s.events[1].target = "cell[2]";
        s.events.push({ at: "2d", action: "gateway.outage", target: "cell", for: "1h" });
      }),
    ).toEqual([
      expect.stringMatching(/^cohorts\[1\]\.kit\[0\]: /),
      'events[1].target: "cell[2]" reaches past the last patient of cell (count 2: cell[0-1])',
      "events[3].target: gateway.outage applies to gateway cohorts; cell is cellular",
    ]);
  });

  it("an action on a cohort of the other connectivity", () => {
    expect(
      problems((s) => {
        s.events[0].target = "cell[0]";
        s.events[1].target = "htn";
        s.events.push({ at: "2d", action: "device.clock_drift", target: "cell", drift: "-30m" });
      }),
    ).toEqual([
      "events[0].target: gateway.outage applies to gateway cohorts; cell is cellular",
      "events[1].target: cellular.outage applies to cellular cohorts; htn is gateway",
      "events[3].target: device.clock_drift applies to gateway cohorts; cell is cellular",
    ]);
  });

  it("an unknown action, and a `for` of zero", () => {
    const found = problems((s) => {
      s.events[0].action = "gateway.explode";
      s.events[1].for = "0h";
    });
    expect(found[0]).toMatch(
      /^events\[0\]\.action: unknown action; expected one of broker\.restart/,
    );
    expect(found[1]).toBe("events[1].for: must be longer than 0");
    // Not a duration: said once, not also "longer than 0".
    expect(problems((s) => (s.events[1].for = "banana"))).toEqual([
      "events[1].for: expected a duration such as 30d, 12h, 90m, 1.5d",
    ]);
  });

  it("a second device of a kit type on a gateway cohort's one gateway", () => {
    const add = (action: string, target: string, device: string) =>
      problems((s) => s.events.push({ at: "2d", action, target, device } as never));
    expect(add("api.order_device", "htn[0]", "Vendor Scale")).toEqual([
      "events[3].device: each htn patient has a Vendor Scale on their one gateway already, and a gateway takes one device per sensor code (spec 2.8): a second needs a second gateway, which scenario patients do not have; a cellular cohort, or a type told apart by sensor_id, can take another",
    ]);
    expect(add("api.activate_device", "htn", "Vendor BPM - Wide Range")).toHaveLength(1);
    expect(add("api.activate_device", "cell[1]", "Vendor Cellular BPM")).toEqual([]);
  });

  it("an unknown device profile or patient model", () => {
    expect(
      problems((s) => {
        s.cohorts[0].kit[1] = "Vendor Toaster";
        s.cohorts[1].model = "athlete";
      }),
    ).toEqual([
      'cohorts[0].kit[1]: unknown device profile "Vendor Toaster" (see rpmlab profiles list)',
      'cohorts[1].model: unknown patient model "athlete"; known: copd, heart-failure, hypertensive, normal, pregnancy, type2-diabetic',
    ]);
  });

  it("a kit that does not fit its connectivity or its gateway", () => {
    expect(
      problems((s) => {
        s.cohorts[0].kit.push("Vendor Cellular Scale", "Vendor BPM - XL", "Vendor BPM - L");
        s.cohorts[1].kit.push("Vendor Pulse Ox");
      }),
    ).toEqual([
      'cohorts[0].kit[2]: "Vendor Cellular Scale" is a direct-cellular device; a gateway cohort\'s kit takes BLE devices',
      'cohorts[0].kit[3]: "Vendor BPM - XL" and "Vendor BPM - Wide Range" share sensor code 10; a gateway takes one device per sensor code',
      'cohorts[0].kit[4]: "Vendor BPM - Wide Range" is already in the kit',
      'cohorts[1].kit[1]: "Vendor Pulse Ox" connects through a gateway; a cellular cohort\'s kit takes direct-cellular (IMEI) devices',
    ]);
  });

  it("a device that is not in the target cohort's kit", () => {
    expect(
      problems((s) => {
        s.events.push({
          at: "1h",
          action: "device.out_of_range",
          target: "htn[1]",
          device: "Vendor Glucometer",
          for: "1h",
        });
      }),
    ).toEqual([
      'events[3].device: "Vendor Glucometer" is not in the kit of htn (Vendor BPM - Wide Range, Vendor Scale)',
    ]);
  });

  it("dangling account and webhook references", () => {
    expect(
      problems((s) => {
        s.cohorts[1].account = "hospital";
        s.events[2].webhook = "backup";
        s.events.push({ at: "2h", action: "api.create_patient", account: "hospital" });
        s.expect[1].webhooks.webhook = "backup";
        s.expect[2].api.account = "hospital";
      }),
    ).toEqual([
      'cohorts[1].account: no account "hospital" in accounts',
      'events[2].webhook: no webhook "backup" in any account\'s webhooks',
      'events[3].account: no account "hospital" in accounts',
      'expect[1].webhooks.webhook: no webhook "backup" in any account\'s webhooks',
      'expect[2].api.account: no account "hospital" in accounts',
    ]);
  });

  it("a fault on a webhook the runner does not host, an expectation on an event it does not get", () => {
    expect(
      problems((s) => {
        s.events[2].webhook = "ext";
        s.expect[1].webhooks.kind = "FULFILLMENT";
      }),
    ).toEqual([
      'events[2].webhook: webhook "ext" posts to https://hooks.example.com/rpm; faults need url: lab (a receiver the runner hosts)',
      'expect[1].webhooks.kind: webhook "main" does not receive FULFILLMENT (its events: MEASUREMENT)',
    ]);
  });

  it("an expectation on webhooks of a kind no webhook of the scenario receives (it could only count 0)", () => {
    // Before: `count: 0` passed whatever the run did, `>= 1` failed with no word of why.
    expect(
      problems((s) => {
        s.expect.push({ webhooks: { kind: "FULFILLMENT", status: "failed", count: 0 } });
      }),
    ).toEqual([
      "expect[3].webhooks.kind: no webhook of the scenario receives FULFILLMENT, so there is nothing to count (main: MEASUREMENT; ext: PATIENT)",
    ]);
    expect(
      problems((s) => {
        s.expect.push({ webhooks: { kind: "PATIENT", count: ">= 1" } });
      }),
    ).toEqual([]);
  });

  it("ids used twice", () => {
    expect(
      problems((s) => {
        s.accounts.push({
          id: "clinic",
          webhooks: [{ id: "main", events: ["PATIENT"], url: "lab" }],
        });
        s.cohorts[1].id = "htn";
      }),
    ).toEqual([
      'accounts[1].id: account id "clinic" is used twice',
      'accounts[1].webhooks[0].id: webhook id "main" is used twice',
      'cohorts[1].id: cohort id "htn" is used twice',
      'events[1].target: no cohort "cell" in cohorts',
    ]);
  });

  it("bad comparators, and an expectation with two kinds", () => {
    expect(
      problems((s) => {
        s.expect[0].readings.stored = "=> 10";
        s.expect[1].webhooks.count = "lots";
        s.expect[2].readings = { missing: 0 };
      }),
    ).toEqual([
      'expect[0].readings.stored: expected a number or "<op> <number>" with op one of == != >= <= > <',
      'expect[1].webhooks.count: expected a number or "<op> <number>" with op one of == != >= <= > <',
      "expect[2]: an expectation has exactly one of readings, webhooks, fulfilment, api",
    ]);
  });

  it("a file whose base name no scenario name can equal says to rename the file", () => {
    // Before, it said to make the name "Drill", which kebab-case then refused: no way out.
    expect(problems(() => {}, "scenarios/Drill.yaml")).toEqual([
      'scenario: "drill" must equal the file\'s base name, "Drill", which is not kebab-case: rename the file, e.g. drill.yaml',
    ]);
    expect(problems(() => {}, "ci/drill.ci.yml")).toEqual([
      'scenario: "drill" must equal the file\'s base name, "drill.ci", which is not kebab-case: rename the file, e.g. drill.yml',
    ]);
  });

  it("a name that is not the file's base name, and text that is not YAML", () => {
    expect(problems(() => {}, "scenarios/other.yaml")).toEqual([
      'scenario: "drill" must equal the file\'s base name, "other"',
    ]);
    const result = checkScenario("scenario: [unclosed", FILE, library);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.issues[0]).toMatchObject({
      file: FILE,
      path: "(root)",
      message: expect.stringMatching(/^not valid YAML: /),
    });
  });

  it("bad spec strings, time zones and clock values", () => {
    expect(
      problems((s) => {
        s.clock.start = "2026-01-05 06:00";
        s.transports = { ble: "bluetooth", broker: "amqp://x", store: "redis://x" };
        s.cohorts[0].time_zones = ["Mars/Olympus_Mons"];
        s.cohorts[0].schedule = ["7:00"];
      }),
    ).toEqual([
      "clock.start: an ISO 8601 UTC date-time ending in Z, e.g. 2026-01-05T00:00:00Z",
      "transports.ble: expected direct, emulated, tcp://host:port or hci:N",
      "transports.broker: expected embedded, embedded:PORT, mqtt://host:port or mqtts://…",
      "transports.store: expected memory, sqlite:PATH or postgres://…",
      'cohorts[0].schedule[0]: a local time of day "HH:MM" (24-hour clock)',
      "cohorts[0].time_zones[0]: not an IANA time zone, e.g. America/New_York",
    ]);
  });

  it("a run outside what a device's uint32 seconds since 1970 can stamp", () => {
    // Accepted before, the run died at its first reading with an E_CODEC_RANGE stack trace.
    expect(
      problems((s) => {
        s.clock.start = "1969-12-31T00:00:00Z";
      }),
    ).toEqual([
      "clock.start: before 1970-01-01T00:00:00Z: a device stamps its records in uint32 seconds since 1970",
    ]);
    const pastEnd =
      "the run must end by 2106-02-06T06:28:15Z: a device stamps its records in uint32 seconds since 1970, which end at 2106-02-07T06:28:15Z, and a run may drain a day past its end";
    expect(
      problems((s) => {
        s.clock.start = "9999-12-31T00:00:00Z";
      }),
    ).toEqual([`clock.start: ${pastEnd}`]);
    expect(
      problems((s) => {
        s.clock.start = "2106-01-01T00:00:00Z";
        s.duration = "40d";
      }),
    ).toEqual([`duration: ${pastEnd}`]);
    // Either end of the range itself runs.
    expect(
      problems((s) => {
        s.clock.start = "1970-01-01T00:00:00Z";
      }),
    ).toEqual([]);
    expect(
      problems((s) => {
        s.clock.start = "2106-02-03T06:28:15Z";
      }),
    ).toEqual([]);
  });

  it("an account id that is no client domain (the lab's URLs carry it)", () => {
    // Accepted before: the run failed once started, E_CONFIG_INVALID about a --client-domain
    // the user never gave, with exit code 2.
    const rule =
      "an account id is the lab's client domain: lower-case letters, digits and -, starting with a letter, ending with a letter or digit, at most 64 characters";
    for (const id of ["my_clinic", "clinic-", "c".repeat(65)]) {
      expect(
        problems((s) => {
          s.accounts[0].id = id;
          s.cohorts[0].account = id;
          s.cohorts[1].account = id;
          s.expect[2].api.account = id;
        }),
      ).toEqual([`accounts[0].id: ${rule}`]);
    }
    expect(
      problems((s) => {
        s.accounts[0].id = "c".repeat(64);
        s.cohorts[0].account = s.accounts[0].id;
        s.cohorts[1].account = s.accounts[0].id;
        s.expect[2].api.account = s.accounts[0].id;
      }),
    ).toEqual([]);
  });

  it("an API path that is not visible ASCII, in an event or an expectation", () => {
    // Accepted before: a control character ended the run with undici's "invalid request path"
    // stack trace; an é went out as a byte the lab answered with 400 Malformed HTTP request.
    const rule =
      'a path under the account\'s /clients/{client_domain}, starting /hwi/ or /asr/, e.g. "/hwi/hwi-patients/", in visible ASCII (percent-encode other characters: é is %C3%A9)';
    expect(
      problems((s) => {
        s.events.push({
          at: "2h",
          action: "api.request",
          account: "clinic",
          method: "GET",
          path: "/hwi/hwi-patients/\u0001",
        });
        s.expect[2].api.get = "/hwi/hwi-patients/José/";
      }),
    ).toEqual([`events[3].path: ${rule}`, `expect[2].api.get: ${rule}`]);
    expect(
      problems((s) => {
        s.expect[2].api.get = "/hwi/hwi-patients/Jos%C3%A9/?page=1";
      }),
    ).toEqual([]);
  });

  it("a duration past the days readings are generated for", () => {
    // Accepted before: the run failed at enrolment, E_CONFIG_INVALID "days must be … from 1 to
    // 3660" (a field the file does not have) and exit code 2.
    expect(problems((s) => (s.duration = "3661d"))).toEqual([
      "duration: at most 3660d: a device's readings are generated for 3660 days at most",
    ]);
    expect(problems((s) => (s.duration = "3660d"))).toEqual([]);
  });

  it("a cohort id too long for its patients' external ids", () => {
    // Accepted before: the run failed at enrolment with the API's 400 on external_id.
    const long = `c${"x".repeat(64)}`;
    expect(
      problems((s) => {
        s.cohorts[1].id = long;
        s.events[1].target = long;
      }),
    ).toEqual([
      "cohorts[1].id: at most 64 characters: each patient's external_id is the cohort's id and a number",
    ]);
  });

  it("a webhook.slow delay past the longest webhook timeout", () => {
    // Accepted before: past 24.8 days Node's timer overflowed and the receiver answered at once.
    const slow = (delay: string) => (s: Draft) => {
      s.events[2] = { at: "2d", action: "webhook.slow", webhook: "main", delay, for: "1h" };
    };
    expect(problems(slow("30d"))).toEqual([
      "events[2].delay: at most 10m: wall time, and past the longest webhook timeout (10m) every attempt times out",
    ]);
    expect(problems(slow("10m"))).toEqual([]);
  });

  it("auth_header without auth_key", () => {
    expect(
      problems((s) => {
        s.accounts[0].webhooks[0].auth_header = "X-Api-Key";
      }),
    ).toEqual([
      "accounts[0].webhooks[0].auth_key: auth_header and auth_key go together: give both or neither",
    ]);
  });

  it("a webhook the lab's API would refuse to register, at its key with the API's message", () => {
    // Accepted before: the run failed once started, E_SCENARIO_FAILED "registering webhook …: 400".
    expect(
      problems((s) => {
        s.accounts[0].webhooks[1].url = "http://hooks example.com/rpm";
        s.accounts[0].webhooks[0].auth_header = "X Api Key";
        s.accounts[0].webhooks[0].auth_key = "line\nbreak";
      }),
    ).toEqual([
      "accounts[0].webhooks[0].auth_header: the lab's API refuses it: Enter a valid HTTP header name.",
      "accounts[0].webhooks[0].auth_key: the lab's API refuses it: Header values may not contain line breaks.",
      "accounts[0].webhooks[0].auth_key: the lab's API refuses it: Header values may hold only visible ASCII, spaces, tabs and characters up to U+00FF (RFC 9110 field-value).",
      "accounts[0].webhooks[1].url: the lab's API refuses it: Enter a valid URL.",
    ]);
    expect(
      problems((s) => {
        s.accounts[0].webhooks[1].url = "https://hooks.example.com:99999/rpm";
      }),
    ).toEqual(["accounts[0].webhooks[1].url: the lab's API refuses it: Enter a valid URL."]);
    expect(
      problems((s) => {
        s.accounts[0].webhooks[0].auth_header = "Authorization";
        s.accounts[0].webhooks[0].auth_key = "Bearer abc";
        s.accounts[0].webhooks[1].url = "https://user:pw@hooks.example.com:8443/rpm?x=1";
      }),
    ).toEqual([]);
  });

  it("an auth_header the lab sets itself", () => {
    expect(
      problems((s) => {
        s.accounts[0].webhooks[0].auth_header = "content-type";
        s.accounts[0].webhooks[0].auth_key = "text/plain";
      }),
    ).toEqual([
      "accounts[0].webhooks[0].auth_header: the lab sets this header itself on every POST (README: Webhook registry)",
    ]);
  });
});

describe("YAML as people write it", () => {
  it("keeps unquoted times, durations and drifts as text (YAML 1.2: no sexagesimal numbers)", () => {
    const text = [
      "scenario: drill",
      "seed: pilot-1",
      "clock: { start: 2026-01-05T00:00:00Z, speed: 60 }",
      "duration: 2d",
      "accounts: [{ id: clinic }]",
      "cohorts:",
      "  - id: htn",
      "    account: clinic",
      "    count: 3",
      "    model: hypertensive",
      "    kit: [Vendor BPM - L]",
      "    connectivity: gateway",
      "    schedule: [08:00, 20:30]",
      "events:",
      "  - at: 09:30",
      "    action: device.clock_drift",
      "    target: htn[1-2]",
      "    drift: -3m",
      "  - at: 1d",
      "    action: broker.outage",
      "    for: 90m",
    ].join("\n");
    const scenario = parseScenario(text, FILE, library);
    expect(scenario.seed).toBe("pilot-1");
    expect(scenario.clock.speed).toBe(60);
    expect(scenario.cohorts[0]!.schedule).toEqual(["08:00", "20:30"]);
    expect(scenario.cohorts[0]!.kit).toEqual(["Vendor BPM - Wide Range"]);
    expect(scenario.cohorts[0]!.timeZones).toEqual(["UTC"]);
    expect(scenario.events.map((e) => [e.action, e.atMs])).toEqual([
      ["device.clock_drift", 9.5 * 3_600_000],
      ["broker.outage", 86_400_000],
    ]);
    expect(scenario.events[0]).toMatchObject({
      target: { cohort: "htn", from: 1, to: 2 },
      device: undefined,
      driftMs: -180_000,
    });
    expect(scenario.events[1]).toMatchObject({ forMs: 90 * 60_000 });
    expect(scenario.expectations).toEqual([]);
  });

  it("takes YAML merge keys: cohorts sharing their settings through an anchor", () => {
    // Refused before as 'unknown key "<<"': YAML 1.2's core schema has no merge key.
    const text = [
      "scenario: drill",
      "seed: 1",
      "clock: { start: 2026-01-05T00:00:00Z }",
      "duration: 1d",
      "accounts: [{ id: clinic }]",
      "cohorts:",
      "  - &htn",
      "    id: east",
      "    account: clinic",
      "    count: 2",
      "    model: hypertensive",
      "    kit: [Vendor BPM - L]",
      "    connectivity: gateway",
      "    time_zones: [America/New_York]",
      "  - <<: *htn",
      "    id: west",
      "    time_zones: [America/Los_Angeles]",
    ].join("\n");
    const scenario = parseScenario(text, FILE, library);
    expect(scenario.cohorts.map((c) => [c.id, c.count, c.timeZones])).toEqual([
      ["east", 2, ["America/New_York"]],
      ["west", 2, ["America/Los_Angeles"]],
    ]);
  });
});

describe("scenario errors name the line and column of the field", () => {
  const text = [
    "scenario: drill", // 1
    "seed: 1",
    "clock:",
    "  start: 2026-01-05T06:00:00Z",
    "  sped: 2", // 5: unknown key
    "duration: 1d",
    "accounts:",
    "  - id: clinic",
    "cohorts:",
    "  - &htn", // 10
    "    id: htn",
    "    account: clinic",
    "    count: 1",
    "    model: hypertensive",
    "    kit: [Vendor BPM - Wide Range]", // 15
    "    connectivity: gateway",
    "expect:",
    '  - readings: { missing: 0, stored: "=> 5" }', // 18: a malformed operator
    "",
  ].join("\n");

  it("as file:line:column: path: message, the position of the field's key", () => {
    let caught: unknown;
    try {
      parseScenario(text, FILE, library);
    } catch (error) {
      caught = error;
    }
    expect(isRpmlabError(caught) && caught.code).toBe("E_SCENARIO_INVALID");
    const lines = (caught as Error).message.split("\n").slice(1);
    expect(lines).toEqual([
      `${FILE}:5:3: clock.sped: unknown key`,
      `${FILE}:18:29: expect[0].readings.stored: expected a number or "<op> <number>" with op one of == != >= <= > <`,
    ]);
  });

  it("for the rules across fields too, and at the nearest key the file has", () => {
    const broken = text
      .replace("  sped: 2\n", "")
      .replace('stored: "=> 5"', 'stored: ">= 5"')
      .replace("model: hypertensive", "model: hypertense")
      .replace(
        "expect:",
        [
          "  - <<: *htn", // 16: its model comes from line 13
          "    id: htn2",
          "events:",
          "  - { at: 2h, action: gateway.outage, target: cell, for: 1h }", // 19
          "expect:",
        ].join("\n"),
      )
      .replace("model: hypertense", "model: &model hypertense")
      .replace(
        "  - <<: *htn",
        "  - { id: htn3, account: clinic, count: 1, model: *model, kit: [Vendor Scale], connectivity: gateway }\n  - <<: *htn",
      );
    const check = checkScenario(broken, FILE, library);
    expect(check.ok).toBe(false);
    const where = (check.ok ? [] : check.issues).map((i) => `${i.line}:${i.column}: ${i.path}`);
    expect(where).toEqual([
      "13:5: cohorts[0].model",
      "16:44: cohorts[1].model", // an alias: at its own key
      "17:5: cohorts[2].model",
      "20:39: events[0].target",
    ]);
  });

  it("an alias with no anchor, or a merge key on a list of names, where it is written", () => {
    // The parser builds these and only fails on converting them: the message had no place, so
    // an editor or a CI annotation had nothing to jump to (README "Scenario files").
    const unresolved = text.replace("    kit: [Vendor BPM - Wide Range]", "    kit: *kit");
    const merged = text.replace("expect:", "  - <<: [htn]\n    id: htn2\nexpect:");
    const where = (source: string) => {
      const check = checkScenario(source, FILE, library);
      return (check.ok ? [] : check.issues).map(
        (i) => `${i.line}:${i.column}: ${i.path}: ${i.message}`,
      );
    };
    expect(where(unresolved)).toEqual([
      "15:10: (root): not valid YAML: Unresolved alias (the anchor must be set before the alias): kit",
    ]);
    expect(where(merged)).toEqual([
      "17:10: (root): not valid YAML: Merge sources must be maps or map aliases",
    ]);
    // A merge of an alias of a list of maps is a merge the parser takes: the fault is the alias.
    const listed = unresolved.replace("seed: 1", "seed: 1\nx: [&list [{ a: 1 }], { <<: *list }]");
    expect(where(listed)[0]).toMatch(/^16:10: \(root\): not valid YAML: Unresolved alias/);
  });
});
