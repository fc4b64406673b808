import { RpmlabError } from "../../src/core/errors.ts";

/** The RpmlabError `run` throws (its code, message and details to assert on). */
export function refusal(run: () => unknown): RpmlabError {
  try {
    run();
  } catch (error) {
    if (error instanceof RpmlabError) return error;
    throw error;
  }
  throw new Error("expected an RpmlabError");
}
