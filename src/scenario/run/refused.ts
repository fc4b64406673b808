import { RpmlabError } from "../../core/errors.ts";
import type { ExpectationResult } from "../evaluate.ts";
import type { ScenarioEvent } from "../types.ts";

/**
 * The lab refused what an event asked of it (an HWI answer other than the one the action needs):
 * the run goes on, and the report lists the event as a failed check, so CI still gets its
 * report and sees which event and why (RefusedEvents). Anything else that fails ends the run.
 */
export function actionRefused(message: string): RpmlabError {
  return new RpmlabError("E_SCENARIO_FAILED", message, { refused: true });
}

function isActionRefused(error: unknown): error is RpmlabError {
  return (
    error instanceof RpmlabError &&
    error.code === "E_SCENARIO_FAILED" &&
    error.details.refused === true
  );
}

/** The events of a run the lab refused, as failed checks, in the order they ran. */
export class RefusedEvents {
  readonly results: ExpectationResult[] = [];

  /** The work of `event`: a refusal becomes a failed check, any other failure stays one. */
  async watch(event: ScenarioEvent, work: Promise<void>): Promise<void> {
    try {
      await work;
    } catch (error) {
      if (!isActionRefused(error)) throw error;
      const text = `${event.action} at ${event.at} takes effect`;
      this.results.push({
        text,
        expected: text,
        source: event.source,
        passed: false,
        actual: error.message,
      });
    }
  }
}
