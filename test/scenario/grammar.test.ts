import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseAt, resolveAt } from "../../src/scenario/at-time.ts";
import { compare, formatComparator, parseComparator } from "../../src/scenario/comparators.ts";
import { formatSelector, parseSelector, resolveSelector } from "../../src/scenario/selectors.ts";

const H = 3_600_000;
const D = 24 * H;
const MIDNIGHT = Date.UTC(2026, 0, 5);

describe("at: calendar form and offsets", () => {
  it.each([
    ["2d 09:30", { kind: "calendar", day: 2, timeOfDayMs: 9.5 * H }],
    ["2d09:30", { kind: "calendar", day: 2, timeOfDayMs: 9.5 * H }],
    ["09:30", { kind: "calendar", day: 0, timeOfDayMs: 9.5 * H }],
    ["00:00", { kind: "calendar", day: 0, timeOfDayMs: 0 }],
    ["23:59:59", { kind: "calendar", day: 0, timeOfDayMs: D - 1000 }],
    ["2d", { kind: "calendar", day: 2, timeOfDayMs: 0 }],
    ["0d", { kind: "calendar", day: 0, timeOfDayMs: 0 }],
    [" 1d 12:00 ", { kind: "calendar", day: 1, timeOfDayMs: 12 * H }],
    ["36h", { kind: "offset", ms: 36 * H }],
    ["90m", { kind: "offset", ms: 1.5 * H }],
    ["1.5d", { kind: "offset", ms: 1.5 * D }],
    ["45s", { kind: "offset", ms: 45_000 }],
    ["0ms", { kind: "offset", ms: 0 }],
  ])("%j parses", (text, expected) => {
    expect(parseAt(text)).toEqual(expected);
  });

  it.each([
    "",
    "   ",
    "24:00",
    "09:60",
    "9:30",
    "09:30:60",
    "2d 24:00",
    "d 09:30",
    "-1d",
    "2 d",
    "2days",
    "09:30 2d",
    "1.5d 09:30",
    "36",
    "tomorrow",
  ])("%j is refused", (text) => {
    expect(parseAt(text)).toBeUndefined();
  });

  it("counts calendar days from clock.start's UTC day, offsets from clock.start itself", () => {
    const start = MIDNIGHT + 6 * H;
    expect(resolveAt(parseAt("2d")!, start)).toBe(2 * D - 6 * H);
    expect(resolveAt(parseAt("48h")!, start)).toBe(2 * D);
    expect(resolveAt(parseAt("0d 09:30")!, start)).toBe(3.5 * H);
    expect(resolveAt(parseAt("05:00")!, start)).toBe(-H);
    expect(resolveAt(parseAt("2d 09:30")!, MIDNIGHT)).toBe(2 * D + 9.5 * H);
  });

  it("a calendar time resolves to the same instant whatever the start hour of day 0", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 29 }),
        fc.integer({ min: 0, max: 23 }),
        fc.integer({ min: 0, max: 59 }),
        fc.integer({ min: 0, max: D - 1 }),
        (day, hh, mm, startInDay) => {
          const text = `${day}d ${String(hh).padStart(2, "0")}:${String(mm).padStart(2, "0")}`;
          const start = MIDNIGHT + startInDay;
          const at = start + resolveAt(parseAt(text)!, start);
          expect(at).toBe(MIDNIGHT + day * D + hh * H + mm * 60_000);
        },
      ),
    );
  });
});

describe("comparators", () => {
  it.each([
    [100, { op: "==", value: 100 }],
    [0, { op: "==", value: 0 }],
    [-3, { op: "==", value: -3 }],
    [2.5, { op: "==", value: 2.5 }],
    ["100", { op: "==", value: 100 }],
    [">= 100", { op: ">=", value: 100 }],
    [">=100", { op: ">=", value: 100 }],
    ["<= 0", { op: "<=", value: 0 }],
    ["> -1", { op: ">", value: -1 }],
    ["< 0.5", { op: "<", value: 0.5 }],
    ["!= 3", { op: "!=", value: 3 }],
    ["== 7", { op: "==", value: 7 }],
    ["  >  4 ", { op: ">", value: 4 }],
  ] as const)("%j parses", (input, expected) => {
    expect(parseComparator(input)).toEqual(expected);
  });

  it.each([
    "",
    ">=",
    "=> 3",
    "= 3",
    "=< 3",
    ">> 3",
    "about 3",
    "3 >=",
    ">= 1e3",
    ">= .5",
    Number.NaN,
    Number.POSITIVE_INFINITY,
  ])("%j is refused", (input) => {
    expect(parseComparator(input)).toBeUndefined();
  });

  it("compares with each operator, boundaries included", () => {
    const at = (text: string, actual: number) => compare(actual, parseComparator(text)!);
    expect([at(">= 100", 99), at(">= 100", 100), at(">= 100", 101)]).toEqual([false, true, true]);
    expect([at("> 100", 100), at("> 100", 101)]).toEqual([false, true]);
    expect([at("<= 0", 0), at("<= 0", 1)]).toEqual([true, false]);
    expect([at("< 1", 0), at("< 1", 1)]).toEqual([true, false]);
    expect([at("== 0", 0), at("== 0", 1)]).toEqual([true, false]);
    expect([at("!= 0", 0), at("!= 0", 1)]).toEqual([false, true]);
  });

  it("formats back to text that parses to the same comparator", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("==", "!=", ">=", "<=", ">", "<"),
        fc.integer({ min: -1_000_000, max: 1_000_000 }),
        (op, value) => {
          const cmp = parseComparator(`${op} ${value}`)!;
          expect(parseComparator(formatComparator(cmp))).toEqual(cmp);
        },
      ),
    );
  });
});

describe("selectors", () => {
  it.each([
    ["htn", { cohort: "htn" }],
    ["htn[*]", { cohort: "htn" }],
    ["htn[3]", { cohort: "htn", from: 3, to: 3 }],
    ["htn[0-4]", { cohort: "htn", from: 0, to: 4 }],
    ["new-gw[2-2]", { cohort: "new-gw", from: 2, to: 2 }],
    ["t2d_cell[10]", { cohort: "t2d_cell", from: 10, to: 10 }],
  ])("%j parses", (text, expected) => {
    expect(parseSelector(text)).toEqual(expected);
  });

  it.each([
    "",
    "HTN",
    "1htn",
    "htn[]",
    "htn[4-0]",
    "htn[-1]",
    "htn[0-]",
    "htn[a]",
    "htn[0,2]",
    "htn[*-2]",
    "htn [0]",
    "htn[0]x",
  ])("%j is refused", (text) => {
    expect(parseSelector(text)).toBeUndefined();
  });

  it("resolves against the cohort's count, inclusive, and refuses indexes past the last", () => {
    expect(resolveSelector(parseSelector("htn")!, 5)).toEqual({ cohort: "htn", from: 0, to: 4 });
    expect(resolveSelector(parseSelector("htn[4]")!, 5)).toEqual({ cohort: "htn", from: 4, to: 4 });
    expect(resolveSelector(parseSelector("htn[0-4]")!, 5)).toEqual({
      cohort: "htn",
      from: 0,
      to: 4,
    });
    expect(resolveSelector(parseSelector("htn[5]")!, 5)).toBeUndefined();
    expect(resolveSelector(parseSelector("htn[3-5]")!, 5)).toBeUndefined();
  });

  it("formats a resolved selector", () => {
    expect(formatSelector({ cohort: "htn", from: 0, to: 4 }, 5)).toBe("htn[*]");
    expect(formatSelector({ cohort: "htn", from: 0, to: 4 })).toBe("htn[0-4]");
    expect(formatSelector({ cohort: "htn", from: 2, to: 2 }, 5)).toBe("htn[2]");
  });
});
