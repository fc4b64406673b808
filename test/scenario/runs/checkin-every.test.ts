/**
 * A gateway cohort's `checkin_every` (README "Scenarios"): its gateways check in that often, the
 * others every 15 minutes. Counted where the lab applies each check-in: the status updates
 * ingestion makes in the lab's store.
 */
import { describe, expect, it } from "vitest";
import { parseScenario } from "../../../src/scenario/load.ts";
import { runScenario } from "../../../src/scenario/runner.ts";
import { type OpenStoreOptions, openStore } from "../../../src/store/open.ts";
import type { Store, StoreRepositories } from "../../../src/store/store.ts";

const SCENARIO = `
scenario: checkin-every
seed: 7
clock: { start: 2026-03-02T00:00:00Z }
duration: 6h
accounts:
  - id: clinic
cohorts:
  - { id: hourly, account: clinic, count: 1, model: normal, kit: [Vendor Scale], connectivity: gateway, checkin_every: 1h }
  - { id: usual, account: clinic, count: 1, model: normal, kit: [Vendor Scale], connectivity: gateway }
`;

/** The lab's store, counting the check-ins ingestion applies, per gateway uuid. */
function countingCheckins() {
  const checkins = new Map<string, number>();
  const count = (repos: StoreRepositories): StoreRepositories => {
    const gateways: StoreRepositories["gateways"] = Object.create(repos.gateways);
    gateways.updateStatus = (uuid, status) => {
      if (status.lastCheckinTime !== undefined) checkins.set(uuid, (checkins.get(uuid) ?? 0) + 1);
      return repos.gateways.updateStatus(uuid, status);
    };
    return new Proxy(repos, {
      get: (target, key) => (key === "gateways" ? gateways : Reflect.get(target, key, target)),
    });
  };
  const open = async (spec: string, options: OpenStoreOptions): Promise<Store> => {
    const store = await openStore(spec, options);
    return new Proxy(store, {
      get(target, key) {
        if (key === "transaction") {
          return <T>(fn: (repos: StoreRepositories) => Promise<T>) =>
            target.transaction((repos) => fn(count(repos)));
        }
        const value = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  };
  return { checkins, open };
}

describe("scenario cohorts: checkin_every", () => {
  it("checks the cohort's gateways in at its period, the others every 15 minutes", async () => {
    const { checkins, open } = countingCheckins();
    const report = await runScenario(parseScenario(SCENARIO, "checkin-every.yaml"), {
      openStore: open,
    });
    expect(report.passed).toBe(true);
    // Six hours and the drain after them (8.5 h): the hourly gateway's 8 or 9 check-ins and the
    // other's 34, each with the few more a gateway makes to acknowledge its whitelist.
    const [hourly, usual] = [...checkins.values()].sort((a, b) => a - b);
    expect(checkins.size).toBe(2);
    expect(hourly).toBeGreaterThanOrEqual(8);
    expect(hourly).toBeLessThanOrEqual(12);
    expect(usual).toBeGreaterThanOrEqual(30);
  }, 60_000);
});
