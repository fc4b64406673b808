import { describe, expect, it } from "vitest";
import { type Comparator, parseComparator } from "../../src/scenario/comparators.ts";
import { evaluate } from "../../src/scenario/evaluate.ts";
import { type Observed, resultCount } from "../../src/scenario/observed.ts";
import type { Expectation, ExpectationCheck } from "../../src/scenario/types.ts";

function cmp(text: string | number): Comparator {
  const c = parseComparator(text);
  if (c === undefined) throw new Error(`bad comparator ${text}`);
  return c;
}

const apiCalls: [string, string][] = [];

const observed: Observed = {
  readings: {
    taken: 120,
    stored: 110,
    lost_by_design: 6,
    returned_with_unit: 0,
    held_at_end: 0,
    dropped_full: 0,
    missing: 4,
    duplicates_stored: 0,
    duplicates_suppressed: 9,
  },
  webhooks: [
    { webhook: "main", event: "MEASUREMENT", state: "delivered", count: 100 },
    { webhook: "audit", event: "MEASUREMENT", state: "delivered", count: 7 },
    { webhook: "main", event: "MEASUREMENT", state: "failed", count: 3 },
    { webhook: "main", event: "FULFILLMENT", state: "delivered", count: 12 },
  ],
  fulfilment: new Map([
    ["Delivered", 5],
    ["In Transit", 6],
  ]),
  api: async (account, path) => {
    apiCalls.push([account, path]);
    if (path.startsWith("/hwi/hwi-patients/")) return { status: 200, count: 7 };
    if (path === "/hwi/hwi-device-types/") return { status: 200, count: undefined };
    if (path === "/hwi/broken/") throw new Error("connection refused");
    return { status: 404, count: undefined };
  },
};

function at(i: number, e: ExpectationCheck & { text: string }): Expectation {
  return { ...e, source: `expect[${i}]` };
}

describe("evaluate", () => {
  it("checks each kind and reports the actual value, in the file's order", async () => {
    apiCalls.length = 0;
    const expectations: Expectation[] = [
      at(0, { kind: "readings", counter: "stored", cmp: cmp(">= 100"), text: "stored" }),
      at(1, { kind: "readings", counter: "missing", cmp: cmp(0), text: "none missing" }),
      at(2, {
        kind: "webhooks",
        event: "MEASUREMENT",
        status: "delivered",
        webhook: undefined,
        cmp: cmp(107),
        text: "all measurement webhooks",
      }),
      at(3, {
        kind: "webhooks",
        event: "MEASUREMENT",
        status: "delivered",
        webhook: "audit",
        cmp: cmp("> 7"),
        text: "audit webhook",
      }),
      at(4, {
        kind: "webhooks",
        event: "SPECIAL_ORDER",
        status: "delivered",
        webhook: undefined,
        cmp: cmp(0),
        text: "no special orders",
      }),
      at(5, { kind: "fulfilment", status: "Delivered", cmp: cmp(5), text: "delivered" }),
      at(6, { kind: "fulfilment", status: "Cancelled", cmp: cmp("> 0"), text: "cancelled" }),
    ];
    const results = await evaluate(expectations, observed);
    expect(results[1]!.expected).toBe("readings.missing == 0");
    expect(results.map(({ expected: _, ...r }) => r)).toEqual([
      { text: "stored", source: "expect[0]", passed: true, actual: 110 },
      { text: "none missing", source: "expect[1]", passed: false, actual: 4 },
      { text: "all measurement webhooks", source: "expect[2]", passed: true, actual: 107 },
      { text: "audit webhook", source: "expect[3]", passed: false, actual: 7 },
      { text: "no special orders", source: "expect[4]", passed: true, actual: 0 },
      { text: "delivered", source: "expect[5]", passed: true, actual: 5 },
      { text: "cancelled", source: "expect[6]", passed: false, actual: 0 },
    ]);
    expect(apiCalls).toEqual([]);
  });

  it("api: the status, and the count when a comparator is given", async () => {
    apiCalls.length = 0;
    const api = (
      i: number,
      path: string,
      status: number,
      count: Comparator | undefined,
    ): Expectation =>
      at(i, { kind: "api", account: "clinic", path, status, count, text: `GET ${path}` });
    const results = await evaluate(
      [
        api(0, "/hwi/hwi-patients/?page=1", 200, cmp(7)),
        api(1, "/hwi/hwi-patients/?page=2", 200, cmp(">= 8")),
        api(2, "/hwi/hwi-patients/", 200, undefined),
        api(3, "/hwi/nothing/", 200, undefined),
        api(4, "/hwi/nothing/", 404, undefined),
        api(5, "/hwi/hwi-device-types/", 200, cmp(3)),
        api(6, "/hwi/broken/", 200, undefined),
      ],
      observed,
    );
    expect(results.map((r) => [r.passed, r.actual])).toEqual([
      [true, "status 200, count 7"],
      [false, "status 200, count 7"],
      [true, "status 200"],
      [false, "status 404"],
      [true, "status 404"],
      [false, "status 200, no count"],
      [false, "request failed: connection refused"],
    ]);
    expect(apiCalls[0]).toEqual(["clinic", "/hwi/hwi-patients/?page=1"]);
    expect(apiCalls).toHaveLength(7);
  });

  it("no expectations: no results", async () => {
    expect(await evaluate([], observed)).toEqual([]);
  });
});

describe("resultCount", () => {
  it.each([
    [[1, 2, 3], 3],
    [[], 0],
    [{ count: 250, next: "http://x/?page=2", previous: null, results: [1, 2] }, 250],
    [{ results: [1, 2] }, 2],
    [{ count: "3", results: [1] }, 1],
    [{ detail: "Not found." }, undefined],
    ["text", undefined],
    [null, undefined],
    [42, undefined],
  ])("%j → %j", (body, expected) => {
    expect(resultCount(body)).toBe(expected);
  });
});
