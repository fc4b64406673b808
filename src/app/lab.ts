import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { buildApp } from "../api/app.ts";
import { AutoReorder } from "../asr/auto-reorder.ts";
import { SupplyCatalogue } from "../asr/supply-catalogue.ts";
import { SupplyShipping } from "../asr/supply-shipping.ts";
import { Catalogue } from "../catalogue/catalogue.ts";
import { withoutCredentials } from "../config/broker-spec.ts";
import type { ServeConfig } from "../config/serve-config.ts";
import { type Clock, SystemClock } from "../core/clock.ts";
import { hostRefused, isAddressInUse, RpmlabError } from "../core/errors.ts";
import { TypedEvents } from "../core/events.ts";
import type { Logger } from "../core/logger.ts";
import { Rng } from "../core/rng.ts";
import type { TimedWork } from "../core/timed-work.ts";
import { LabFeed } from "../dashboard/feed.ts";
import { DASHBOARD_PATH } from "../dashboard/page-route.ts";
import type { FulfilmentEvents } from "../fulfilment/events.ts";
import { FulfilmentSimulator } from "../fulfilment/simulator.ts";
import type { Ingestor } from "../ingest/ingestor.ts";
import { ingestRetention } from "../ingest/retention.ts";
import { BrokerTap } from "../ingest/sources/broker-tap.ts";
import { type Broker, createBroker } from "../mqtt/broker.ts";
import { storeAuth } from "../mqtt/credentials.ts";
import { randomBase62 } from "../store/api-key-secret.ts";
import { type OpenStoreOptions, openStore } from "../store/open.ts";
import type { Store } from "../store/store.ts";
import { dispatchStoreFor } from "../webhooks/dispatch-stores.ts";
import { WebhookDispatcher } from "../webhooks/dispatcher.ts";
import { ManualSends } from "../webhooks/manual.ts";
import { createWebhookSender } from "../webhooks/sender.ts";
import { createAccount, createKey } from "./accounts.ts";
import { startIngest } from "./lab-ingest.ts";

/** ServeConfig.scheduleResyncMs when unset: another process's carrier step waits 30 s at most. */
const DEFAULT_SCHEDULE_RESYNC_MS = 30_000;

/** See Lab.running. */
export interface LabParts {
  readonly broker: Broker;
  readonly ingestor: Ingestor;
  readonly events: TypedEvents<FulfilmentEvents>;
  readonly dispatcher: WebhookDispatcher;
  /**
   * Shipments, supply orders, automatic reorders and ingestion's retention (message-id claims,
   * dead letters): work the lab's own clock timers start.
   */
  readonly timedWork: readonly TimedWork[];
}

/** What a Lab is built from besides its config (injected persistence, STYLE habit 11). */
export interface LabDeps {
  /**
   * Opens the store `config.store` names (default openStore). A wrapper around it sees or
   * changes what the lab writes: scenario runs take one (RunOptions.openStore), e.g. a store
   * that fails, to check how a run ends when ingestion cannot commit.
   */
  readonly openStore?: (spec: string, options: OpenStoreOptions) => Promise<Store>;
}

/** What `rpmlab serve` prints once it is ready (one JSON line with --json). */
export interface LabInfo {
  readonly base_url: string;
  /** The dashboard page with the admin token in its fragment (never sent to the server). */
  readonly dashboard_url: string;
  readonly client_domain: string;
  /** A fresh key of the account, created at this start; shown once. */
  readonly api_key: string;
  readonly admin_token: string;
  readonly mqtt_url: string;
}

/**
 * The composition root of `rpmlab serve` (STYLE habit 11): builds store, broker, ingestion and
 * API from validated config. The constructor does nothing; `start()` starts them in order and
 * `stop()` stops them in reverse — the API first (no new requests), then ingestion (drains: every
 * received message is committed or left unacknowledged for redelivery), the broker, the store.
 */
export class Lab {
  private readonly clock: Clock;
  /** What start() started, each with the name stop() gives it when it fails to close. */
  private readonly stack: Array<{ readonly part: string; readonly stop: () => Promise<void> }> = [];

  /** `clock`: the system clock unless given (tests and scenarios run the lab on a VirtualClock). */
  constructor(
    private readonly config: ServeConfig,
    private readonly logger: Logger,
    clock?: Clock,
    private readonly deps: LabDeps = {},
  ) {
    this.clock = clock ?? this.ownClock;
  }

  /** The clock the lab made for itself, and disposes of at stop. */
  private readonly ownClock = new SystemClock();
  private parts: LabParts | undefined;

  /**
   * The running lab's parts scenario fault actions work on (src/scenario): its broker (a
   * restart, an outage), its ingestion (a restart), its fulfilment events (a delivered box
   * powers its devices on) and its webhook dispatcher (a run waits for it between clock steps).
   */
  get running(): LabParts {
    if (this.parts === undefined) throw new RpmlabError("E_USAGE", "the lab is not started");
    return this.parts;
  }

  async start(): Promise<LabInfo> {
    try {
      return await this.startAll();
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  /**
   * Stops every part, in reverse, a failed one included (each logged with its name), and answers
   * those that failed to close: serve exits non-zero naming them (README "rpmlab serve").
   */
  async stop(): Promise<readonly StopFailure[]> {
    const failed: Array<{ part: string; error: unknown }> = [];
    for (const { part, stop } of this.stack.splice(0).reverse()) {
      await stop().catch((error: unknown) => {
        failed.push({ part, error });
        this.logger.error({ err: error, part }, `${part}: stop failed`);
      });
    }
    this.ownClock.dispose();
    return failed;
  }

  private async startAll(): Promise<LabInfo> {
    const { config, clock, logger } = this;
    // Public ids come from a seeded stream the store forks per opening (src/store/context.ts).
    const rng = new Rng(config.idSeed ?? "rpmlab-serve");
    const catalogue = Catalogue.load();
    const store = await (this.deps.openStore ?? openStore)(config.store, {
      clock,
      rng,
      // A PostgreSQL connection the server ended: logged; the work on it fails and is retried.
      onBackgroundError: (error) => logger.warn({ err: error }, "store connection lost"),
    });
    this.stack.push({ part: "the store", stop: () => store.close() });

    const broker = createBroker(config.broker, {
      auth: storeAuth(store.mqttCredentials),
      host: config.host,
      logger,
    });
    // Taken before the broker listens: until ingestion starts, the embedded broker refuses
    // uplinks instead of acknowledging what nobody would store.
    const tap = BrokerTap.of(broker);
    await broker.start();
    this.stack.push({ part: "the MQTT broker", stop: () => broker.stop() });

    // Issue 4 §1: the webhook dispatcher, stopped after the API and ingestion (which write its
    // outbox) and before the store.
    const sender = createWebhookSender(config.webhookSender, config.webhooks);
    this.stack.push({ part: "the webhook sender", stop: () => sender.close() });
    const webhookRng = rng.fork("webhooks");
    const deliveries = dispatchStoreFor({
      store,
      storeSpec: config.store,
      catalogue,
      rng: webhookRng,
      clock,
      logger,
    });
    this.stack.push({ part: "the webhook delivery store", stop: () => deliveries.close() });
    const dispatcher = new WebhookDispatcher({
      store: deliveries,
      clock,
      rng: webhookRng,
      sender,
      config: config.webhooks,
      ...(config.webhookRetentionMs === undefined
        ? {}
        : { retentionMs: config.webhookRetentionMs }),
      ...(config.webhookPollMs === undefined ? {} : { pollMs: config.webhookPollMs }),
      logger: logger.child({ component: "webhooks" }),
    });
    dispatcher.start();
    this.stack.push({ part: "the webhook dispatcher", stop: () => dispatcher.stop() });
    const webhooks = {
      nudge: () => dispatcher.nudge(),
      manual: new ManualSends({ store, clock, rng: webhookRng, sender }),
    };

    // One bus for the fulfilment events of the API and of gateway adoption; their webhook
    // events are in the outbox already (atomically()), the nudge only says so at once.
    const events = new TypedEvents<FulfilmentEvents>();
    const parts = { broker, events, ingestor: undefined as Ingestor | undefined };
    // The dashboard's live feed (src/dashboard): what ingestion, the dispatcher and the device
    // services announce, for whoever has /lab/v1/events/ open.
    const feed = new LabFeed({ store, clock, logger, catalogue });
    this.stack.push({ part: "the dashboard feed", stop: async () => feed.close() });
    feed.attachFulfilment(events);
    feed.attachDispatcher(dispatcher.events);
    events.on("fulfilment.status", webhooks.nudge);
    events.on("replacement.status", webhooks.nudge);
    events.on("patient.written", webhooks.nudge);
    events.on("supply.status", webhooks.nudge);
    // Orphan readings attached to the new device, and a patient its activation created, wait in
    // the outbox too.
    events.on("device.activated", webhooks.nudge);
    await startIngest({
      config,
      clock,
      logger,
      onStop: (part, stop) => this.stack.push({ part, stop }),
      store,
      broker,
      tap,
      catalogue,
      events,
      rng: rng.fork("adoption"),
      onStored: webhooks.nudge,
      started: (ingestor) => {
        parts.ingestor = ingestor;
        feed.attachIngest(ingestor.events);
      },
    });

    // Issue 4 §2: shipments move on the lab's clock; pending transitions are re-armed (those
    // due while the lab was down apply at once, in order) before the API takes requests.
    const resyncMs = config.scheduleResyncMs ?? DEFAULT_SCHEDULE_RESYNC_MS;
    const fulfilment = new FulfilmentSimulator({
      store,
      catalogue,
      clock,
      events,
      fulfilment: config.fulfilment,
      logger: logger.child({ component: "fulfilment" }),
      resyncMs,
    });
    await fulfilment.start();
    this.stack.push({ part: "the fulfilment simulator", stop: () => fulfilment.stop() });

    // ASR (spec 4.5): supply orders ship on the same clock and durations; automatic reorder
    // checks the accounts' glucometers hourly.
    const supplies = SupplyCatalogue.load(undefined, catalogue);
    const asr = { store, clock, supplies, catalogue, events, fulfilment: config.fulfilment };
    const shipping = new SupplyShipping({
      ...asr,
      logger: logger.child({ component: "asr" }),
      resyncMs,
    });
    await shipping.start();
    this.stack.push({ part: "supply shipping", stop: () => shipping.stop() });
    const reorder = new AutoReorder({ ...asr, logger: logger.child({ component: "asr" }) });
    reorder.start();
    this.stack.push({ part: "automatic reorder", stop: () => reorder.stop() });
    const retention = ingestRetention(store, clock, logger.child({ component: "ingest" }));
    retention.start();
    this.stack.push({ part: "ingest retention", stop: () => retention.stop() });

    const adminToken = config.adminToken ?? randomBase62(32);
    const app = buildApp({
      store,
      clock,
      logger,
      catalogue,
      supplies,
      events,
      rng: rng.fork("api"),
      config: { adminToken, rateLimit: config.rateLimit, fulfilment: config.fulfilment },
      webhooks,
      feed,
      // Replays join the running ingestion's batches, events and all (README "Dead letters").
      replay: (message, replays) => parts.ingestor!.replay(message, replays),
      mqttCredentialIssued: (username) => broker.endConnectionsOf?.(username),
    });
    this.stack.push({ part: "the HTTP API", stop: () => app.close() });
    await app.listen({ host: config.host, port: config.port }).catch((error: unknown) => {
      throw listenError(error, config.host, config.port);
    });
    // Last, once nothing else can fail: a key is shown once, and a start that failed (a taken
    // port, an unreachable broker) must not leave one in the store that nobody was shown.
    const apiKey = await this.accountKey(store);
    this.parts = {
      broker,
      events,
      ingestor: parts.ingestor!,
      dispatcher,
      timedWork: [fulfilment, shipping, reorder, retention],
    };
    this.stack.push({
      part: "the lab's parts",
      stop: async () => {
        this.parts = undefined;
      },
    });
    const baseUrl = baseUrlOf(app);
    return {
      base_url: baseUrl,
      dashboard_url: `${baseUrl}${DASHBOARD_PATH}#token=${encodeURIComponent(adminToken)}`,
      client_domain: config.clientDomain,
      api_key: apiKey,
      admin_token: adminToken,
      mqtt_url: withoutCredentials(broker.url),
    };
  }

  /** The serve account (created on first start, development environment) and a fresh key. */
  private async accountKey(store: Store): Promise<string> {
    const domain = this.config.clientDomain;
    if ((await store.accounts.getByClientDomain(domain)) === null) {
      await createAccount(store, { clientDomain: domain });
    }
    return (await createKey(store, domain, "rpmlab serve")).key;
  }
}

function baseUrlOf(app: FastifyInstance): string {
  const address = app.server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

/**
 * A taken HTTP port is the common case (a second serve or demo, or another dev server on 8000):
 * the environment's fault, not the command line's, so E_PORT_IN_USE (exit 1) as for the broker.
 * Other refusals (an address not on this machine) stay a configuration error.
 */
function listenError(error: unknown, host: string, port: number): RpmlabError {
  if (isAddressInUse(error))
    return new RpmlabError(
      "E_PORT_IN_USE",
      `HTTP port ${port} on ${host} is taken: choose another with --port N, or --port 0 for any free one`,
      { field: "port", port },
      error,
    );
  const reason = error instanceof Error ? error.message : String(error);
  // A port below 1024 without the privilege is the port's fault; anything else (a name that
  // does not resolve, an address not on this machine) is the host's.
  if ((error as { code?: unknown }).code === "EACCES") {
    return new RpmlabError(
      "E_CONFIG_INVALID",
      `--port ${port}: cannot listen on ${host}:${port} (${reason}); ports below 1024 need privileges`,
      { field: "port", port },
      error,
    );
  }
  return hostRefused(error, host, port);
}

/** A part of the lab that failed to close (Lab.stop). */
export interface StopFailure {
  readonly part: string;
  readonly error: unknown;
}

/**
 * E_SHUTDOWN_INCOMPLETE for `failed` parts, after `what` ("stopped on SIGTERM"): each part named
 * with why, as serve, run and demo report it (README "rpmlab serve").
 */
export function shutdownIncomplete(failed: readonly StopFailure[], what: string): RpmlabError {
  const parts = failed.map(({ part, error }) => `${part} (${messageOf(error)})`);
  return new RpmlabError(
    "E_SHUTDOWN_INCOMPLETE",
    `${what}, but ${parts.join(", ")} failed to close: what it held may not all be written`,
    { parts: failed.map((f) => f.part) },
  );
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
