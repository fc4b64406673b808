import { RpmlabError } from "../../core/errors.ts";
import type { Scenario } from "../types.ts";

/**
 * What a scenario's transports allow, checked before anything starts (issue 7 §1): BLE on the
 * direct path or emulated (in-process hosts on the run's virtual clock); `--btsnoop` only with
 * emulated BLE; broker faults only on the embedded broker the run can restart. A file that asks
 * for more is E_SCENARIO_INVALID (rpmlab run: exit 2, as for any file that cannot run), not a
 * lab that failed (E_SCENARIO_FAILED, exit 3, which a CI job may retry).
 */
export function checkTransports(scenario: Scenario, options: { btsnoop?: string }): void {
  const ble = scenario.transports.ble;
  if (ble !== "direct" && ble !== "emulated") {
    throw new RpmlabError(
      "E_SCENARIO_INVALID",
      `${scenario.file}: transports.ble ${ble}: a scenario runs on a virtual clock, which cannot drive a real radio or a controller in another process; use direct or emulated in a scenario, and \`rpmlab gateway --ble ${ble}\` to work with real devices`,
      { file: scenario.file, field: "transports.ble" },
    );
  }
  if (options.btsnoop !== undefined && ble !== "emulated") {
    throw new RpmlabError(
      "E_USAGE",
      `--btsnoop captures the HCI traffic of emulated BLE, and ${scenario.file} has transports.ble ${ble} (no HCI): set transports.ble: emulated in the scenario to capture it`,
      { field: "btsnoop" },
    );
  }
  const brokerFault = scenario.events.find((e) => e.action.startsWith("broker."));
  if (brokerFault !== undefined && scenario.transports.broker !== "embedded") {
    throw new RpmlabError(
      "E_SCENARIO_INVALID",
      `${scenario.file}: ${brokerFault.source} ${brokerFault.action} restarts the lab's embedded broker; with transports.broker ${scenario.transports.broker} the run cannot restart that broker`,
      { file: scenario.file, field: brokerFault.source },
    );
  }
}
