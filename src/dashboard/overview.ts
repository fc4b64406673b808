import type { Store } from "../store/store.ts";
import type { AccountRow } from "../store/types.ts";
import type { DeliveryState } from "../store/types-webhooks.ts";
import { iso } from "./feed-events.ts";

/** Totals of one account, as GET /lab/v1/overview/ shows them. */
export interface AccountOverview {
  readonly id: string;
  readonly client_domain: string;
  readonly environment: string;
  readonly patients: number;
  readonly devices: number;
  readonly gateways: number;
  readonly measurements: number;
  readonly webhook_deliveries: Readonly<Record<DeliveryState, number>>;
}

export interface LabOverview {
  /** The lab's clock (virtual in `rpmlab demo`), ISO 8601. */
  readonly now: string;
  readonly accounts: readonly AccountOverview[];
  /** Across the lab (dead letters belong to no account). */
  readonly dead_letters: number;
}

const COUNT = { limit: 0, count: true } as const;

/**
 * What the lab holds, counted: the dashboard's totals, which its live feed then moves on. Each
 * number is one count(*) (the list queries' own, asked for no rows), led by the account's index.
 */
export async function labOverview(store: Store, now: number): Promise<LabOverview> {
  const accounts = await store.accounts.list();
  return {
    now: iso(now),
    accounts: await Promise.all(accounts.map((account) => accountOverview(store, account))),
    dead_letters: (await store.deadLetters.list({}, COUNT)).total ?? 0,
  };
}

async function accountOverview(store: Store, account: AccountRow): Promise<AccountOverview> {
  const { id } = account;
  return {
    id,
    client_domain: account.clientDomain,
    environment: account.environment,
    patients: (await store.patients.list(id, COUNT)).total ?? 0,
    devices: (await store.devices.list(id, {}, COUNT)).total ?? 0,
    gateways: (await store.gateways.list(id, {}, COUNT)).total ?? 0,
    measurements: await store.measurements.count(id),
    webhook_deliveries: await store.webhookDeliveries.countByState(id),
  };
}
