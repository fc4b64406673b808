import type { FastifyInstance } from "fastify";
import { buildApp } from "../../src/api/app.ts";
import type { FulfilmentConfig } from "../../src/config/fulfilment-config.ts";
import type { WebhookDeliveryConfig } from "../../src/config/webhook-config.ts";
import { TypedEvents } from "../../src/core/events.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import type { FulfilmentEvents } from "../../src/fulfilment/events.ts";
import { createDeviceServices, type DeviceServices } from "../../src/fulfilment/services.ts";
import { MessageProcessor } from "../../src/ingest/processor.ts";
import type { GeneratedReading } from "../../src/readings/generated.ts";
import { openStore } from "../../src/store/open.ts";
import type { Store } from "../../src/store/store.ts";
import type { AccountRow, DeviceRow } from "../../src/store/types.ts";
import type { NewWebhook, WebhookRow } from "../../src/store/types-ingest.ts";
import type { DeliveryRow } from "../../src/store/types-webhooks.ts";
import type { DispatchStore } from "../../src/webhooks/dispatch-store.ts";
import { dispatchStoreFor } from "../../src/webhooks/dispatch-stores.ts";
import { WebhookDispatcher } from "../../src/webhooks/dispatcher.ts";
import { ManualSends } from "../../src/webhooks/manual.ts";
import { createWebhookSender, type WebhookSender } from "../../src/webhooks/sender.ts";
import { catalogue, inbound, type Sender, uplinkMessage } from "../ingest/fixtures.ts";
import { consumerSchema } from "./consumer-schema.ts";
import type { Received } from "./receiver.ts";

/** 2026-03-02: readings of the ingest fixtures (from 2026-01-01) are received from here on. */
export const START = 1_772_409_600_000;
export const MINUTE = 60_000;
export const HOUR = 3_600_000;
export const ADMIN_TOKEN = "webhook-tests-admin-token";

export interface WebhookLabOptions {
  readonly store?: string;
  /** The fulfilment settings of the device services and the API (default the lab's). */
  readonly fulfilment?: FulfilmentConfig;
  readonly config?: Partial<WebhookDeliveryConfig>;
  readonly sender?: WebhookSender;
}

/**
 * The webhook path without MQTT: a store on a virtual clock, the ingestion core's processor
 * storing readings (and writing the outbox as it does in serve), a dispatcher with the real
 * undici sender, nudged the way serve nudges it. Time moves only through `runUntil`, which lets
 * every attempt finish (real sockets, real time) before the clock takes its next step.
 */
export class WebhookLab {
  readonly processor: MessageProcessor;
  readonly dispatcher: WebhookDispatcher;
  /** The dispatcher's store side: a worker thread on a SQLite file, as in serve. */
  private readonly dispatchStore: DispatchStore;
  readonly sender: WebhookSender;
  /** The device services (activation, unlink, replacements…), nudging as serve's do. */
  readonly devices: DeviceServices;
  readonly events = new TypedEvents<FulfilmentEvents>();
  readonly manual: ManualSends;
  private messages = 0;
  private app: FastifyInstance | undefined;
  private key: string | undefined;
  private readonly fulfilment: FulfilmentConfig | undefined;

  private constructor(
    readonly clock: VirtualClock,
    readonly store: Store,
    readonly account: AccountRow,
    options: WebhookLabOptions,
  ) {
    this.processor = new MessageProcessor({ store, catalogue });
    this.fulfilment = options.fulfilment;
    this.sender =
      options.sender ??
      createWebhookSender("http", { timeoutMs: 2000, concurrency: 4, ...options.config });
    const rng = new Rng("webhook-tests");
    this.dispatchStore = dispatchStoreFor({
      store,
      storeSpec: options.store ?? "memory",
      catalogue,
      rng,
      clock: this.clock,
    });
    this.dispatcher = new WebhookDispatcher({
      store: this.dispatchStore,
      clock: this.clock,
      rng,
      sender: this.sender,
      config: { timeoutMs: 2000, concurrency: 4, ...options.config },
      // Nudges drive the work here; a poll every virtual 10 minutes is the fallback.
      pollMs: 10 * MINUTE,
    });
    for (const name of [
      "fulfilment.status",
      "replacement.status",
      "device.activated",
      "patient.written",
      "supply.status",
    ] as const) {
      this.events.on(name, () => this.dispatcher.nudge());
    }
    this.devices = createDeviceServices({
      store,
      catalogue,
      clock,
      events: this.events,
      rng: new Rng("webhook-tests/devices"),
      ...(options.fulfilment === undefined ? {} : { fulfilment: options.fulfilment }),
    });
    this.manual = new ManualSends({
      store,
      clock,
      rng: new Rng("webhook-tests"),
      sender: this.sender,
    });
  }

  /** The HWI and lab admin API over this lab, wired to the dispatcher as serve wires it. */
  async api(): Promise<{ app: FastifyInstance; key: string }> {
    if (this.app === undefined || this.key === undefined) {
      this.key = (await this.store.apiKeys.create(this.account.id, { name: "tests" })).key;
      this.app = buildApp({
        store: this.store,
        clock: this.clock,
        catalogue,
        events: this.events,
        config: {
          adminToken: ADMIN_TOKEN,
          ...(this.fulfilment === undefined ? {} : { fulfilment: this.fulfilment }),
        },
        webhooks: { nudge: () => this.dispatcher.nudge(), manual: this.manual },
      });
    }
    return { app: this.app, key: this.key };
  }

  /** A JSON call on the account's HWI paths. */
  async hwi(method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE", path: string, body?: unknown) {
    const { app, key } = await this.api();
    return app.inject({
      method,
      url: `/clients/${this.account.clientDomain}/hwi/${path}`,
      headers: {
        authorization: `Api-Key ${key}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  }

  /** A JSON call on the account's ASR paths (the module must be on: store.accounts.update). */
  async asr(method: "GET" | "POST" | "DELETE", path: string, body?: unknown) {
    const { app, key } = await this.api();
    return app.inject({
      method,
      url: `/clients/${this.account.clientDomain}/asr/${path}`,
      headers: {
        authorization: `Api-Key ${key}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  }

  /** A JSON call on the lab admin API. */
  async admin(method: "GET" | "POST" | "PATCH", path: string, body?: unknown) {
    const { app } = await this.api();
    return app.inject({
      method,
      url: `/lab/v1/${path}`,
      headers: {
        authorization: `Bearer ${ADMIN_TOKEN}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  }

  static async open(options: WebhookLabOptions = {}): Promise<WebhookLab> {
    const clock = new VirtualClock({ startMs: START });
    const store = await openStore(options.store ?? "memory", { clock, rng: new Rng("webhooks") });
    const account = await store.accounts.create({
      clientDomain: "clinic",
      environment: "development",
    });
    const lab = new WebhookLab(clock, store, account, options);
    lab.dispatcher.start();
    return lab;
  }

  webhook(input: Partial<NewWebhook> & { endpoint: string }): Promise<WebhookRow> {
    return this.store.webhooks.create(this.account.id, { event: "MEASUREMENT", ...input });
  }

  /** A device of the sender's type on its gateway or IMEI, with a patient. */
  async device(sender: Sender, externalId: string): Promise<DeviceRow> {
    const patient =
      (await this.store.patients.get(this.account.id, externalId)) ??
      (await this.store.patients.create(this.account.id, { externalId }));
    return this.store.devices.create(this.account.id, {
      name: sender.profile.name,
      sensorCode: sender.profile.sensor_code,
      hardwareUuid: sender.hardwareUuid,
      sensorId: sender.sensorId,
      patientId: patient.id,
      status: "Active",
    });
  }

  /** Stores readings as ingestion does (one message, one transaction), and nudges. */
  async ingest(sender: Sender, readings: readonly GeneratedReading[]): Promise<number> {
    const message = uplinkMessage(sender, `m-${++this.messages}`, readings);
    const result = await this.processor.process([inbound(message, this.clock.now())]);
    this.dispatcher.nudge();
    return result.stored.length;
  }

  /** Every attempt and write finished. */
  settle(): Promise<void> {
    return this.dispatcher.idle();
  }

  /** Moves the clock to `until`, event by event, letting each step's attempts finish. */
  async runUntil(until: number): Promise<void> {
    for (;;) {
      await this.settle();
      const next = this.clock.nextEventAt();
      if (next === undefined || next > until) break;
      this.clock.runSync({ until: next });
    }
    this.clock.runSync({ until });
    await this.settle();
  }

  async deliveries(): Promise<DeliveryRow[]> {
    return (await this.store.webhookDeliveries.list(this.account.id, {}, { limit: 10_000 })).rows;
  }

  async close(): Promise<void> {
    await this.app?.close();
    await this.dispatcher.stop();
    await this.dispatchStore.close();
    await this.sender.close();
    await this.store.close();
  }
}

/** Parses every request a receiver got with the strict consumer of its webhook. */
export function expectConsumable(
  received: readonly Received[],
  webhook: { event: string; postAsArray: boolean },
): unknown[] {
  return received.map((r) => {
    const parsed = consumerSchema(webhook.event, webhook.postAsArray).safeParse(r.json);
    if (!parsed.success) {
      throw new Error(`a strict consumer refuses ${r.body}: ${parsed.error.message}`);
    }
    return parsed.data;
  });
}
