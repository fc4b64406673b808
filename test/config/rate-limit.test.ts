import { describe, expect, it } from "vitest";
import { adminTarget } from "../../src/config/admin-target.ts";
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

describe("empty --store and --url (a blank $VAR on a command line)", () => {
  it("refuses an empty --store naming the flag, not falling back to $RPMLAB_STORE or the default file", () => {
    for (const env of [{ RPMLAB_STORE: "sqlite:other.db" }, {}]) {
      let thrown: unknown;
      try {
        resolveStoreSpec("", env);
      } catch (error) {
        thrown = error;
      }
      expect(isRpmlabError(thrown, "E_CONFIG_INVALID")).toBe(true);
      expect((thrown as Error).message).toMatch(/^--store /);
    }
  });

  it("refuses an empty --url or --admin-token naming the flag, not using $RPMLAB_URL, $RPMLAB_ADMIN_TOKEN or the default", () => {
    const env = {
      RPMLAB_URL: "http://127.0.0.1:9999",
      RPMLAB_ADMIN_TOKEN: "t0ken-from-the-env-0123",
    };
    for (const [flags, flag] of [
      [{ url: "", adminToken: "t0ken-from-a-flag-01234" }, "--url"],
      [{ url: "http://127.0.0.1:8080", adminToken: "" }, "--admin-token"],
    ] as const) {
      for (const e of [env, {}]) {
        let thrown: unknown;
        try {
          adminTarget(flags, e);
        } catch (error) {
          thrown = error;
        }
        expect(isRpmlabError(thrown), `${flag} with ${JSON.stringify(e)}`).toBe(true);
        expect((thrown as Error).message).toContain(flag);
        expect((thrown as Error).message).toMatch(/empty/);
      }
    }
  });
});
