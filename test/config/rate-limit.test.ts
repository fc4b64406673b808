import { describe, expect, it } from "vitest";
import { resolveStoreSpec } from "../../src/config/lab-store.ts";
import { formatRateLimit, parseRateLimit } from "../../src/config/rate-limit.ts";
import { isRpmlabError } from "../../src/core/errors.ts";

describe("parseRateLimit", () => {
  it("reads DRF's N/period forms", () => {
    expect(parseRateLimit("1/s")).toEqual({ max: 1, windowMs: 1000 });
    expect(parseRateLimit("30/m")).toEqual({ max: 30, windowMs: 60_000 });
    expect(parseRateLimit(" 100 / Hour ")).toEqual({ max: 100, windowMs: 3_600_000 });
    expect(parseRateLimit("5000/day")).toEqual({ max: 5000, windowMs: 86_400_000 });
    expect(parseRateLimit("off")).toBeNull();
    expect(parseRateLimit("none")).toBeNull();
  });

  it("rejects anything else with E_CONFIG_INVALID", () => {
    for (const text of ["", "1", "0/s", "-1/s", "1/w", "1.5/s", "s/1", "1/ss"]) {
      let error: unknown;
      try {
        parseRateLimit(text);
      } catch (e) {
        error = e;
      }
      expect(isRpmlabError(error, "E_CONFIG_INVALID"), text).toBe(true);
    }
  });

  it("formats back", () => {
    expect(formatRateLimit(parseRateLimit("1/s"))).toBe("1/s");
    expect(formatRateLimit(parseRateLimit("30/m"))).toBe("30/m");
    expect(formatRateLimit(null)).toBe("off");
  });
});

describe("resolveStoreSpec", () => {
  it("takes the flag, else RPMLAB_STORE, else the default file", () => {
    expect(resolveStoreSpec("memory", { RPMLAB_STORE: "sqlite:x.db" })).toBe("memory");
    expect(resolveStoreSpec(undefined, { RPMLAB_STORE: "sqlite:x.db" })).toBe("sqlite:x.db");
    expect(resolveStoreSpec(undefined, {})).toBe("sqlite:./.rpmlab/lab.db");
  });
});
