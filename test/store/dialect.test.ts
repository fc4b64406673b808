import { describe, expect, it } from "vitest";
import { postgresDialect, sqliteDialect } from "../../src/store/dialect.ts";

const withCode = (code: string) => Object.assign(new Error(code), { code });

describe("driver errors by kind", () => {
  it("treats busy databases, deadlocks and serialization failures as transient", () => {
    expect(sqliteDialect.classify(withCode("SQLITE_BUSY"))).toBe("unavailable");
    expect(postgresDialect.classify(withCode("40P01"))).toBe("unavailable");
    expect(postgresDialect.classify(withCode("40001"))).toBe("unavailable");
    expect(postgresDialect.classify(withCode("23505"))).toBe("unique");
    expect(postgresDialect.classify(withCode("42601"))).toBe("other");
  });
});
