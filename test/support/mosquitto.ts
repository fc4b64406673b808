/**
 * The local Mosquitto for the suites that run on it (DESIGN.md "Testing": 127.0.0.1:1883,
 * anonymous; RPMLAB_TEST_MQTT_URL overrides). When it is unreachable a suite is skipped with the
 * reason printed, except on CI (which sets CI), where it fails: CI must run it.
 */
import { describe, it } from "vitest";
import { probeBroker } from "../mqtt/helpers.ts";

export const MOSQUITTO_URL = process.env.RPMLAB_TEST_MQTT_URL ?? "mqtt://127.0.0.1:1883";

/** The broker URL, or undefined after declaring the suite skipped (locally) or failing (CI). */
export async function mosquittoOrSkip(suite: string): Promise<string | undefined> {
  const problem = await probeBroker(MOSQUITTO_URL);
  if (problem === null) return MOSQUITTO_URL;
  const reason = `Mosquitto not reachable at ${MOSQUITTO_URL}: ${problem}`;
  if (process.env.CI) {
    describe(suite, () => {
      it("runs on CI", () => {
        throw new Error(`${reason} (CI must run the Mosquitto suites)`);
      });
    });
  } else {
    console.warn(`${suite}: ${reason}: skipped`);
    describe.skip(`${suite} (${reason}: skipped)`, () => {
      it("needs Mosquitto", () => undefined);
    });
  }
  return undefined;
}
