import { compare } from "./comparators.ts";
import type { Observed } from "./observed.ts";
import { describeCheck } from "./resolve-expectations.ts";
import type { Expectation, ExpectationCheck } from "./types.ts";

/** One expectation checked: its text and place in the file, whether it held, what was seen. */
export interface ExpectationResult {
  readonly text: string;
  /** The check itself (`readings.missing == 0`), also when `text` replaced it in the report. */
  readonly expected: string;
  readonly source: string;
  readonly passed: boolean;
  /** A number for counters; for api checks a description such as "status 200, count 7". */
  readonly actual: number | string;
}

/**
 * Checks every expectation against what the run observed, in the file's order. API checks run
 * one after the other (each is a real request); a request that throws fails its expectation with
 * the error as the actual value rather than ending the evaluation.
 */
export async function evaluate(
  expectations: readonly Expectation[],
  observed: Observed,
): Promise<ExpectationResult[]> {
  const results: ExpectationResult[] = [];
  for (const expectation of expectations) {
    const { passed, actual } = await check(expectation, observed);
    results.push({
      text: expectation.text,
      expected: describeCheck(expectation),
      source: expectation.source,
      passed,
      actual,
    });
  }
  return results;
}

async function check(
  expectation: ExpectationCheck,
  observed: Observed,
): Promise<{ passed: boolean; actual: number | string }> {
  switch (expectation.kind) {
    case "readings": {
      const actual = observed.readings[expectation.counter];
      return { passed: compare(actual, expectation.cmp), actual };
    }
    case "webhooks": {
      // No webhook named: the deliveries to every webhook of the scenario.
      let actual = 0;
      for (const w of observed.webhooks) {
        if (w.event !== expectation.event || w.state !== expectation.status) continue;
        if (expectation.webhook !== undefined && w.webhook !== expectation.webhook) continue;
        actual += w.count;
      }
      return { passed: compare(actual, expectation.cmp), actual };
    }
    case "fulfilment": {
      const actual = observed.fulfilment.get(expectation.status) ?? 0;
      return { passed: compare(actual, expectation.cmp), actual };
    }
    case "api":
      return checkApi(expectation, observed);
  }
}

async function checkApi(
  expectation: Extract<ExpectationCheck, { kind: "api" }>,
  observed: Observed,
): Promise<{ passed: boolean; actual: string }> {
  let answer: { status: number; count: number | undefined };
  try {
    answer = await observed.api(expectation.account, expectation.path);
  } catch (error) {
    return { passed: false, actual: `request failed: ${(error as Error).message}` };
  }
  const statusOk = answer.status === expectation.status;
  if (expectation.count === undefined) {
    return { passed: statusOk, actual: `status ${answer.status}` };
  }
  const countText = answer.count === undefined ? "no count" : `count ${answer.count}`;
  const countOk = answer.count !== undefined && compare(answer.count, expectation.count);
  return { passed: statusOk && countOk, actual: `status ${answer.status}, ${countText}` };
}
