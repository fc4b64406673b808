import { Writable } from "node:stream";
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from "fastify";
import { buildApp } from "../../src/api/app.ts";
import { API_ROUTES } from "../../src/api/routes/index.ts";
import type { ApiConfig, RouteTable } from "../../src/api/types.ts";
import { TypedEvents } from "../../src/core/events.ts";
import { createLogger } from "../../src/core/logger.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { LabFeed } from "../../src/dashboard/feed.ts";
import type { FulfilmentEvents } from "../../src/fulfilment/events.ts";
import { openStore } from "../../src/store/open.ts";
import type { Store } from "../../src/store/store.ts";
import type { AccountRow } from "../../src/store/types.ts";
import { checkAgainstDocument } from "./openapi-conformance.ts";

/** 2024-10-16T04:10:00Z, the wire-formats sample's timestamp. */
export const T0 = 1_729_051_800_000;
export const ADMIN_TOKEN = "lab-admin-token-for-tests";

export interface TestAccount {
  readonly account: AccountRow;
  readonly key: string;
  readonly keyId: string;
}

export interface Lab {
  readonly app: FastifyInstance;
  readonly store: Store;
  readonly clock: VirtualClock;
  /** What the device services announced (fulfilment webhooks to be), in order. */
  readonly events: TypedEvents<FulfilmentEvents>;
  /** The live feed of /lab/v1/events/, fed by `events` (attach more sources in a test). */
  readonly feed: LabFeed;
  readonly recorded: { name: string; payload: unknown }[];
  /** Log lines (JSON) the app wrote, when built with `log: true`. */
  readonly logs: string[];
  /** acme-dev: development, ASR disabled. */
  readonly dev: TestAccount;
  /** acme: production, ASR enabled. */
  readonly prod: TestAccount;
  /** other-dev: another development account. */
  readonly other: TestAccount;
  advance(ms: number): void;
  close(): Promise<void>;
}

export interface LabOptions {
  readonly config?: Partial<ApiConfig>;
  /** Route plugins served besides the app's own (API_ROUTES), per scope. */
  readonly extraRoutes?: Partial<RouteTable>;
  readonly log?: boolean;
  /** The store to open (default `memory`), e.g. `sqlite:PATH` to read it from outside. */
  readonly store?: string;
}

/** A fresh lab: memory store on a virtual clock, three accounts with a key each, the app. */
export async function makeLab(opts: LabOptions = {}): Promise<Lab> {
  const clock = new VirtualClock({ startMs: T0 });
  const store = await openStore(opts.store ?? "memory", { clock, rng: new Rng("api-tests") });
  const account = async (
    clientDomain: string,
    environment: "development" | "production",
    asr: boolean,
  ) => {
    const row = await store.accounts.create({ clientDomain, environment, asrEnabled: asr });
    const created = await store.apiKeys.create(row.id, { name: "test" });
    return { account: row, key: created.key, keyId: created.apiKey.id };
  };
  const dev = await account("acme-dev", "development", false);
  const prod = await account("acme", "production", true);
  const other = await account("other-dev", "development", false);
  const logs: string[] = [];
  const events = new TypedEvents<FulfilmentEvents>();
  const recorded: { name: string; payload: unknown }[] = [];
  for (const name of ["fulfilment.status", "replacement.status", "device.activated"] as const) {
    events.on(name, (payload) => recorded.push({ name, payload }));
  }
  const destination = new Writable({
    write(chunk, _enc, done) {
      logs.push(
        ...String(chunk)
          .split("\n")
          .filter((l) => l !== ""),
      );
      done();
    },
  });
  const feed = new LabFeed({ store, clock });
  feed.attachFulfilment(events);
  const app = buildApp({
    store,
    clock,
    feed,
    ...(opts.log === true ? { logger: createLogger({ level: "info", destination }) } : {}),
    config: { adminToken: ADMIN_TOKEN, ...opts.config },
    events,
    routes: {
      hwi: [...API_ROUTES.hwi, ...(opts.extraRoutes?.hwi ?? [])],
      asr: [...API_ROUTES.asr, ...(opts.extraRoutes?.asr ?? [])],
      v2: [...API_ROUTES.v2, ...(opts.extraRoutes?.v2 ?? [])],
      lab: [...API_ROUTES.lab, ...(opts.extraRoutes?.lab ?? [])],
    },
  });
  // Every answer of every API test is checked against /docs/json, as a client generated from it
  // would take it (not in a lab with a test's own routes, which document nothing).
  const conformance = opts.extraRoutes === undefined ? checkAgainstDocument(app) : undefined;
  return {
    app,
    store,
    clock,
    events,
    feed,
    recorded,
    logs,
    dev,
    prod,
    other,
    advance: (ms) => {
      clock.runSync({ until: clock.now() + ms });
    },
    close: async () => {
      const violations = (await conformance?.violations()) ?? [];
      await app.close();
      await store.close();
      if (violations.length > 0) {
        throw new Error(`answers the OpenAPI document does not declare:\n${violations.join("\n")}`);
      }
    },
  };
}

export function apiKey(key: string): Record<string, string> {
  return { authorization: `Api-Key ${key}` };
}

export const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** hwi base path of an account. */
export function hwi(account: TestAccount | string, rest = ""): string {
  const domain = typeof account === "string" ? account : account.account.clientDomain;
  return `/clients/${domain}/hwi/${rest}`;
}

/** A JSON request as a client sends it. */
export function send(
  app: FastifyInstance,
  method: InjectOptions["method"],
  url: string,
  key: string | null,
  body?: unknown,
): Promise<LightMyRequestResponse> {
  return app.inject({
    method,
    url,
    headers: {
      ...(key === null ? {} : apiKey(key)),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}
