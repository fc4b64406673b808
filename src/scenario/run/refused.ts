import { RpmlabError } from "../../core/errors.ts";

/**
 * The lab refused what an event asked of it (an HWI answer other than the one the action needs):
 * the run goes on, and the report lists the event as a failed check, so CI still gets its
 * report and sees which event and why (runner.ts). Anything else that fails ends the run.
 */
export function actionRefused(message: string): RpmlabError {
  return new RpmlabError("E_SCENARIO_FAILED", message, { refused: true });
}

export function isActionRefused(error: unknown): error is RpmlabError {
  return (
    error instanceof RpmlabError &&
    error.code === "E_SCENARIO_FAILED" &&
    error.details.refused === true
  );
}
