import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { parse as parseYaml, stringify } from "yaml";
import { ACTION_NAMES } from "../../src/scenario/actions.ts";
import { AT_PATTERN } from "../../src/scenario/at-time.ts";
import { COMPARATOR_PATTERN } from "../../src/scenario/comparators.ts";
import {
  renderScenarioJsonSchema,
  SCENARIO_SCHEMA_PATH,
  scenarioJsonSchema,
} from "../../src/scenario/json-schema.ts";
import { checkScenario, defaultLibrary } from "../../src/scenario/load.ts";
import { SELECTOR } from "../../src/scenario/selectors.ts";

// biome-ignore lint/suspicious/noExplicitAny: a case may break any field, typed or not
type Draft = Record<string, any>;

describe("published scenario JSON Schema (scenarios/rpmlab-scenario.schema.json)", () => {
  it("is current (run `npm run docs` after changing src/scenario's schema)", () => {
    const committed = JSON.parse(readFileSync(SCENARIO_SCHEMA_PATH, "utf8")) as unknown;
    expect(committed).toEqual(scenarioJsonSchema());
  });

  it("refuses unknown keys and offers every action by name", () => {
    const schema = scenarioJsonSchema() as {
      additionalProperties: boolean;
      required: string[];
      properties: {
        events: { items: { oneOf: Array<{ properties: { action: { const: string } } }> } };
      };
    };
    expect(schema.additionalProperties).toBe(false);
    expect(schema.required).toEqual([
      "scenario",
      "seed",
      "clock",
      "duration",
      "accounts",
      "cohorts",
    ]);
    expect(schema.properties.events.items.oneOf.map((o) => o.properties.action.const)).toEqual(
      ACTION_NAMES,
    );
  });

  it("gives editors the runner's patterns for durations", () => {
    const schema = scenarioJsonSchema() as { properties: { duration: { pattern: string } } };
    const duration = new RegExp(schema.properties.duration.pattern);
    for (const ok of ["30d", "1.5d", "90m", " 12 h "]) expect(duration.test(ok), ok).toBe(true);
    for (const bad of ["banana", "30", "d", "5 days", "-1d"])
      expect(duration.test(bad), bad).toBe(false);
  });

  it("gives editors the runner's patterns for times, targets, comparators and webhook URLs", () => {
    const patterns = new Set<string>();
    const collect = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(collect);
      else if (typeof node === "object" && node !== null) {
        for (const [key, value] of Object.entries(node)) {
          if (key === "pattern" && typeof value === "string") patterns.add(value);
          else collect(value);
        }
      }
    };
    collect(scenarioJsonSchema());
    for (const re of [AT_PATTERN, SELECTOR, COMPARATOR_PATTERN]) {
      expect(patterns, re.source).toContain(re.source);
    }
    const matches = (re: RegExp, text: string) => new RegExp(re.source).test(text);
    for (const ok of ["2d 09:30", "09:30", "3d", "36h", "1d09:30"]) {
      expect(matches(AT_PATTERN, ok), ok).toBe(true);
    }
    for (const bad of ["soon", "25", "2d 9:30", "-1d"])
      expect(matches(AT_PATTERN, bad), bad).toBe(false);
    for (const bad of ["GW!!", "htn[", "Htn"]) expect(matches(SELECTOR, bad), bad).toBe(false);
    expect(matches(COMPARATOR_PATTERN, ">= 5")).toBe(true);
    expect(matches(COMPARATOR_PATTERN, "about 5")).toBe(false);
    const url = [...patterns].find((p) => p.includes("lab"))!;
    expect(matches(new RegExp(url), "https://example.com/hook")).toBe(true);
    expect(matches(new RegExp(url), "ftp://x")).toBe(false);
  });

  it("flags an impossible start, an unknown store or broker, and a webhook event listed twice", () => {
    const schema = scenarioJsonSchema() as {
      properties: {
        clock: { properties: { start: { pattern: string } } };
        transports: { properties: { store: { pattern: string }; broker: { pattern: string } } };
      };
    };
    const start = new RegExp(schema.properties.clock.properties.start.pattern);
    expect(start.test("2026-01-05T00:00:00Z")).toBe(true);
    expect(start.test("2026-13-45T99:00:00Z")).toBe(false);
    const store = new RegExp(schema.properties.transports.properties.store.pattern);
    for (const ok of ["memory", "sqlite:/tmp/x.db", "postgres://u@h:5432/db"]) {
      expect(store.test(ok), ok).toBe(true);
    }
    expect(store.test("redis://x")).toBe(false);
    const broker = new RegExp(schema.properties.transports.properties.broker.pattern);
    expect(broker.test("embedded:0")).toBe(true);
    expect(broker.test("amqp://x")).toBe(false);
    expect(renderScenarioJsonSchema()).toContain('"uniqueItems": true');
  });

  describe("as an editor's validator reads it (Ajv, JSON Schema 2020-12)", () => {
    const validate = new Ajv2020({ allErrors: true, strict: false }).compile(scenarioJsonSchema());
    const dir = fileURLToPath(new URL("../../scenarios", import.meta.url));
    const shipped = readdirSync(dir).filter((f) => f.endsWith(".yaml"));
    const library = defaultLibrary();
    const smokeDraft = () => parseYaml(readFileSync(join(dir, "smoke.yaml"), "utf8")) as Draft;

    it.each(shipped)("accepts the shipped %s", (file) => {
      const valid = validate(parseYaml(readFileSync(join(dir, file), "utf8")));
      expect(validate.errors ?? [], file).toEqual([]);
      expect(valid).toBe(true);
    });

    it("flags an expectation with two kinds, or none", () => {
      const smoke = parseYaml(readFileSync(join(dir, "smoke.yaml"), "utf8")) as {
        expect: unknown[];
      };
      const readings = { readings: { missing: 0 } };
      const webhooks = { webhooks: { kind: "MEASUREMENT", count: 1 } };
      for (const item of [{ ...readings, ...webhooks }, { text: "nothing to check" }]) {
        expect(validate({ ...smoke, expect: [item] }), JSON.stringify(item)).toBe(false);
      }
      expect(validate({ ...smoke, expect: [readings, webhooks] })).toBe(true);
    });

    /**
     * Fields the loader refuses that an editor's validator can refuse too (the rules across
     * fields, ranges of durations and calendar checks are the loader's alone): a file the
     * editor passes should not fail `rpmlab scenario validate` on any of these.
     */
    const refusedByBoth: Record<string, (s: Draft) => void> = {
      "a malformed comparator": (s) => {
        s.expect[0].readings.stored = "=> 5";
      },
      "a comparator that is a word": (s) => {
        s.expect[0].readings.stored = ">= five";
      },
      "a readings expectation naming no counter": (s) => {
        s.expect[0].readings = {};
      },
      "an unknown webhook kind": (s) => {
        s.expect[1].webhooks.kind = "MEASURMENT";
      },
      "an unknown transports.ble": (s) => {
        s.transports = { ble: "bluetooth" };
      },
      "an unknown fulfilment key": (s) => {
        s.fulfilment = { probabilities: { carrier_hold: 0 }, proabilities: {} };
      },
      "an unknown fulfilment probability": (s) => {
        s.fulfilment = { probabilities: { carier_hold: 0 } };
      },
      "a fulfilment probability above 1": (s) => {
        s.fulfilment = { probabilities: { carrier_hold: 2 } };
      },
      "asr.auto_reorder with no threshold": (s) => {
        s.accounts[0].asr = { auto_reorder: { supply_name: "Glucometer Test Strips (50)" } };
      },
      "auth_header without auth_key": (s) => {
        s.accounts[0].webhooks[0].auth_header = "X-Api-Key";
      },
      "auth_key without auth_header": (s) => {
        s.accounts[0].webhooks[0].auth_key = "secret";
      },
      "a cohort count of 0": (s) => {
        s.cohorts[0].count = 0;
      },
      "an event at no time the grammar knows": (s) => {
        s.events = [{ at: "soon", action: "broker.restart" }];
      },
    };

    it.each(Object.keys(refusedByBoth))("refuses %s, as the loader does", (name) => {
      const scenario = smokeDraft();
      refusedByBoth[name]!(scenario);
      const text = stringify(scenario);
      expect(checkScenario(text, "smoke.yaml", library).ok, "loader").toBe(false);
      expect(validate(parseYaml(text)), "JSON Schema").toBe(false);
    });

    it("accepts what the loader accepts of those fields", () => {
      const scenario = smokeDraft();
      scenario.transports = { ble: " hci:0 " };
      scenario.fulfilment = { probabilities: { carrier_hold: 0 }, durations: { restock: "1d" } };
      scenario.accounts[0].asr = { auto_reorder: { days_below: 3 } };
      scenario.accounts[0].webhooks[0].auth_header = "X-Api-Key";
      scenario.accounts[0].webhooks[0].auth_key = "secret";
      const text = stringify(scenario);
      expect(checkScenario(text, "smoke.yaml", library).ok, "loader").toBe(true);
      expect(validate(parseYaml(text)), JSON.stringify(validate.errors)).toBe(true);
    });
  });
});
