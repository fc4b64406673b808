import type { MqttClient } from "mqtt";
import type { Clock } from "../../src/core/clock.ts";
import { RpmlabError } from "../../src/core/errors.ts";
import type { Logger } from "../../src/core/logger.ts";
import type { BatchResult, MessageOutcome } from "../../src/ingest/events.ts";
import { Ingestor } from "../../src/ingest/ingestor.ts";
import type { IngestSource } from "../../src/ingest/source.ts";
import { BrokerTap } from "../../src/ingest/sources/broker-tap.ts";
import { MqttSubscription } from "../../src/ingest/sources/subscription.ts";
import { type Broker, createBroker } from "../../src/mqtt/broker.ts";
import { connectClient, type LabClientOptions } from "../../src/mqtt/client.ts";
import { issueCredentials, storeAuth } from "../../src/mqtt/credentials.ts";
import type { Store, StoreRepositories } from "../../src/store/store.ts";
import type { MqttRole } from "../../src/store/types-hardware.ts";
import { Clients, within } from "../mqtt/helpers.ts";
import { catalogue } from "./fixtures.ts";

/** The store, with `change` applied to the repositories of every transaction. */
export function storeWith(
  store: Store,
  change: (tx: StoreRepositories) => StoreRepositories,
): Store {
  return { ...store, transaction: (fn) => store.transaction((tx) => fn(change(tx))) };
}

/** What a store throws when its database went away: the ingestor retries the batch. */
export const unavailable = () => new RpmlabError("E_STORE_UNAVAILABLE", "database went away");

/** Every outcome the ingestor committed, with a wait for "n outcomes" that has a deadline. */
export class Outcomes {
  readonly all: MessageOutcome[] = [];
  readonly batches: BatchResult[] = [];
  private waiters: (() => void)[] = [];

  constructor(ingestor: Ingestor) {
    ingestor.events.on("batch", (batch) => {
      this.batches.push(batch);
      this.all.push(...batch.outcomes);
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  count(n: number, ms?: number): Promise<void> {
    const check = (resolve: () => void) => {
      if (this.all.length >= n) resolve();
      else this.waiters.push(() => check(resolve));
    };
    return within(new Promise<void>(check), `${n} ingested messages (have ${this.all.length})`, ms);
  }
}

/**
 * An embedded broker with the lab's credentials and ACL, an ingestor on it, and clients that
 * publish as gateways or cellular devices with credentials of their own.
 */
export class IngestLab {
  readonly broker: Broker;
  readonly clients = new Clients();
  private readonly ingestors: Ingestor[] = [];
  private service: Promise<{ username: string; password: string }> | undefined;

  constructor(
    readonly store: Store,
    readonly clock: Clock,
  ) {
    this.broker = createBroker("embedded:0", { auth: storeAuth(store.mqttCredentials) });
  }

  async start(): Promise<void> {
    await this.broker.start();
  }

  /**
   * An ingestor on this broker: through a subscription with the ingestion service's
   * credentials (issued once; as on an external broker), or through the broker's tap (as
   * `serve` does on the embedded broker). `workerStore`, the spec of `store`, commits its
   * batches in a worker thread.
   */
  async ingestor(
    options: {
      via?: "subscription" | "tap";
      clientId?: string;
      store?: Store;
      workerStore?: string;
      logger?: Logger;
    } = {},
  ): Promise<Ingestor> {
    const { via = "subscription", clientId = "rpmlab-ingest-1", store = this.store } = options;
    let source: IngestSource;
    if (via === "tap") {
      source = BrokerTap.of(this.broker)!;
    } else {
      this.service ??= issueCredentials(this.store.mqttCredentials, "service", "rpmlab-ingest");
      const { username, password } = await this.service;
      source = new MqttSubscription({
        url: this.broker.url,
        clientId,
        username,
        password,
        sharedGroup: this.broker.sharedSubscriptions ? "rpmlab-ingest" : null,
      });
    }
    const ingestor = new Ingestor({
      source,
      store,
      catalogue,
      clock: this.clock,
      ...(options.workerStore === undefined ? {} : { workerStore: options.workerStore }),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    });
    this.ingestors.push(ingestor);
    return ingestor;
  }

  /** A device-side client: a gateway (uuid) or a direct-cellular device (IMEI). */
  async device(
    role: Exclude<MqttRole, "service">,
    username: string,
    options: Partial<LabClientOptions> = {},
  ): Promise<MqttClient> {
    const { password } = await issueCredentials(this.store.mqttCredentials, role, username);
    return this.clients.add(
      await connectClient(this.broker.url, {
        clientId: username,
        username,
        password,
        clean: true,
        ...options,
      }),
    );
  }

  async stop(): Promise<void> {
    for (const ingestor of this.ingestors.splice(0)) await ingestor.stop();
    await this.clients.endAll();
    await this.broker.stop();
  }
}
