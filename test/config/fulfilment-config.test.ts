import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseDurationRange } from "../../src/config/duration.ts";
import { DEFAULT_FULFILMENT_CONFIG, fulfilmentConfig } from "../../src/config/fulfilment-config.ts";
import { fulfilmentAssignments, readFulfilmentFile } from "../../src/config/fulfilment-inputs.ts";
import { serveConfig } from "../../src/config/serve-config.ts";
import { RpmlabError } from "../../src/core/errors.ts";

const H = 3_600_000;
const D = 24 * H;

function configError(run: () => unknown): RpmlabError {
  try {
    run();
  } catch (error) {
    if (error instanceof RpmlabError) return error;
    throw error;
  }
  throw new Error("expected a configuration error");
}

/** Issue 4 §2 / lead's constraint 3: one validated fulfilment configuration. */
describe("fulfilment configuration", () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it("defaults to US ground shipping: 1–2 business days to ship, 2–5 days in transit", () => {
    const c = DEFAULT_FULFILMENT_CONFIG;
    expect(c.durations.processing).toEqual({ minMs: D, maxMs: 2 * D });
    expect(c.durations.inTransit).toEqual({ minMs: 2 * D, maxMs: 5 * D });
    expect(c.durations.firstScan).toEqual({ minMs: 4 * H, maxMs: 20 * H });
    expect(c.durations.duplicateCleanup).toEqual({ minMs: 3 * D, maxMs: 3 * D });
    expect(c.inTransitScans).toEqual({ min: 2, max: 5 });
    expect(c.probabilities).toEqual({
      stockShortage: 0.05,
      deliveryIssue: 0.04,
      deliveryIssueSignature: 0.12,
      carrierHold: 0.03,
    });
    expect(c).toMatchObject({
      seed: "rpmlab",
      timeScale: 1,
      trackingBaseUrl: "https://tracking.rpmlab.test",
      maxDeliveryAttempts: 3,
      carriers: ["ups", "fedex", "usps"],
    });
  });

  it("lays a file, then key=value assignments, over the defaults", () => {
    dir = mkdtempSync(join(tmpdir(), "rpmlab-fulfilment-"));
    const file = join(dir, "lab.yaml");
    writeFileSync(
      file,
      'fulfilment:\n  seed: demo\n  time_scale: 1440\n  durations:\n    in_transit: 1d..3d\n    duplicate_cleanup: "off"\n',
    );
    const config = fulfilmentConfig(
      readFulfilmentFile(file),
      fulfilmentAssignments([
        "durations.in_transit=12h",
        "probabilities.carrier_hold=0.5",
        "carriers=[usps]",
        "in_transit_scans=3",
      ]),
    );
    expect(config).toMatchObject({
      seed: "demo",
      timeScale: 1440,
      carriers: ["usps"],
      inTransitScans: { min: 3, max: 3 },
      probabilities: { carrierHold: 0.5, stockShortage: 0.05 },
    });
    expect(config.durations.inTransit).toEqual({ minMs: 12 * H, maxMs: 12 * H });
    expect(config.durations.duplicateCleanup).toBeNull();
    const serve = serveConfig(
      { fulfilmentConfig: file, fulfilment: ["max_delivery_attempts=1"] },
      {},
    );
    expect(serve.fulfilment).toMatchObject({ seed: "demo", maxDeliveryAttempts: 1 });
  });

  it("says what a key takes when its value is of the wrong type, not zod's 'Invalid input'", () => {
    const error = configError(() =>
      fulfilmentConfig({
        time_scale: "fast",
        durations: { in_transit: 5, duplicate_cleanup: 3 },
        in_transit_scans: true,
        max_delivery_attempts: 2.5,
        carriers: "ups",
      }),
    );
    for (const key of [
      'fulfilment.time_scale: must be a number greater than 0, got "fast"',
      "fulfilment.durations.in_transit: 5 is not a duration or a range of them, e.g. 4h",
      "fulfilment.durations.duplicate_cleanup: 3 is not off, a duration or a range of them",
      "fulfilment.in_transit_scans: true is not a whole number or range from 1 to 50",
      "fulfilment.max_delivery_attempts: must be a whole number from 1 to 10, got 2.5",
      'fulfilment.carriers: must be a list of one or more of ups, fedex, usps, e.g. [ups, usps], got "ups"',
    ]) {
      expect(error.message).toContain(key);
    }
    expect(error.message).not.toMatch(/Invalid input|expected (string|number|int|array)/);
    // An empty value is one problem, said once.
    expect(configError(() => fulfilmentConfig(fulfilmentAssignments(["carriers="]))).message).toBe(
      'fulfilment.carriers: must be a list of one or more of ups, fedex, usps, e.g. [ups, usps], got ""',
    );
  });

  it("reports every problem at once, each named by its key", () => {
    const error = configError(() =>
      fulfilmentConfig({
        time_scale: 0,
        durations: { in_transit: "5d..2d", pickup: "soon" },
        probabilities: { carrier_hold: 2 },
        carriers: ["dhl"],
        colour: "red",
      }),
    );
    expect(error.code).toBe("E_CONFIG_INVALID");
    for (const key of [
      "fulfilment.time_scale: must be a number greater than 0, got 0;",
      'fulfilment.durations.in_transit: "5d..2d" is not a duration or a range of them',
      'fulfilment.durations.pickup: "soon" is not a duration',
      "fulfilment.probabilities.carrier_hold: must be a number from 0 to 1, got 2;",
      'fulfilment.carriers.0: must be a list of one or more of ups, fedex, usps, e.g. [ups, usps], got "dhl"',
      "fulfilment.colour: unknown key",
    ]) {
      expect(error.message).toContain(key);
    }
    // A seed YAML rounded (past 2^53-1) or cut would seed as another number: refused, as a
    // scenario's seed: is.
    for (const seed of ["12345678901234567", "42.5"]) {
      expect(
        configError(() => fulfilmentConfig(fulfilmentAssignments([`seed=${seed}`]))).message,
      ).toMatch(
        /^fulfilment\.seed: an integer (from -9007199254740991 to 9007199254740991 )?or a non-empty string, got \d+(\.5)?$/,
      );
    }
    expect(fulfilmentConfig(fulfilmentAssignments(["seed=0x2A"])).seed).toBe("42");
    expect(configError(() => fulfilmentAssignments(["in_transit"])).message).toContain(
      "--fulfilment takes key=value",
    );
    expect(configError(() => readFulfilmentFile("/nonexistent/lab.yaml")).details.field).toBe(
      "fulfilment-config",
    );
  });

  it("names the file whose content is not the fulfilment keys, and the key at fault in it", () => {
    dir = mkdtempSync(join(tmpdir(), "rpmlab-fulfilment-"));
    const list = join(dir, "list.yaml");
    writeFileSync(list, "- time_scale: 1440\n- seed: demo\n");
    const listError = configError(() => readFulfilmentFile(list));
    expect(listError.message).toBe(
      `${list}: holds a list, not the fulfilment keys (a mapping such as "time_scale: 1440", README "Fulfilment")`,
    );
    expect(listError.details).toMatchObject({ field: "fulfilment-config", file: list });
    const scalar = join(dir, "scalar.yaml");
    writeFileSync(scalar, "fast\n");
    expect(configError(() => readFulfilmentFile(scalar)).message).toContain(
      'holds the string "fast", not the fulfilment keys',
    );
    // A key beside the fulfilment: section was ignored, unsaid: time_scale stayed 1.
    const beside = join(dir, "beside.yaml");
    writeFileSync(beside, "fulfilment:\n  seed: demo\ntime_scale: 1440\n");
    expect(configError(() => readFulfilmentFile(beside)).message).toBe(
      `${beside}: time_scale: unknown key beside fulfilment: (its keys go at the top or under fulfilment:, not both)`,
    );
    const bad = join(dir, "bad.yaml");
    writeFileSync(bad, "fulfilment:\n  time_scale: 0\n");
    // Named with the file even though the assignment laid over it would have mended it.
    expect(
      configError(() => serveConfig({ fulfilmentConfig: bad, fulfilment: ["time_scale=2"] }, {}))
        .message,
    ).toBe(`${bad}: fulfilment.time_scale: must be a number greater than 0, got 0`);
    // And the flag, when an assignment is at fault: the key alone does not say where it was set.
    expect(configError(() => serveConfig({ fulfilment: ["time_scale=0"] }, {})).message).toBe(
      "--fulfilment: fulfilment.time_scale: must be a number greater than 0, got 0",
    );
  });

  it("reads durations and ranges of them", () => {
    expect(parseDurationRange("90m")).toEqual({ minMs: 90 * 60_000, maxMs: 90 * 60_000 });
    expect(parseDurationRange("1.5d..2d")).toEqual({ minMs: 1.5 * D, maxMs: 2 * D });
    expect(parseDurationRange("500ms..2s")).toEqual({ minMs: 500, maxMs: 2000 });
    for (const bad of ["", "2", "2w", "2d..1d", "1d..2d..3d", "-1h"]) {
      expect(parseDurationRange(bad), bad).toBeUndefined();
    }
  });
});
