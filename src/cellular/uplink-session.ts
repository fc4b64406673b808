import type { MqttClient } from "mqtt";
import type { Clock, TimerHandle } from "../core/clock.ts";
import { isRpmlabError, RpmlabError } from "../core/errors.ts";
import { TypedEvents } from "../core/events.ts";
import { brokerError, connectClient, subscribeAll } from "../mqtt/client.ts";
import { TOPIC_QOS } from "../mqtt/topics.ts";
import type { CellularLink } from "./link.ts";

/**
 * A modem's MQTT session: QoS 1 on a persistent session (clean: false, one stable client id, so
 * the broker keeps the subscriptions and queued downlink while the modem is away), a last will,
 * the lab's credentials. It follows the CellularLink: when the link goes down the modem is off
 * the network, so the connection is dropped without DISCONNECT (the broker then publishes the
 * will, [MQTT-3.1.2-8]) and nothing is sent; when the link comes back it connects again.
 */
export interface UplinkSessionOptions {
  /** Broker URL, e.g. mqtt://127.0.0.1:1883. */
  readonly url: string;
  /** Must be the username or start with `{username}-` on the lab's broker (acl.ts). */
  readonly clientId: string;
  readonly username?: string;
  readonly password?: string;
  /** Published by the broker when the connection dies without DISCONNECT. */
  readonly will?: {
    readonly topic: string;
    readonly payload: unknown;
    readonly retain: boolean;
  };
  /** Downlink filters, subscribed at QoS 1 on every connection. */
  readonly subscriptions?: readonly string[];
  readonly link: CellularLink;
  readonly clock: Clock;
  /**
   * After a failed connection attempt while the link is up, the next one (Clock ms), doubling
   * with each failure in a row up to MAX_BACKOFF times it.
   */
  readonly retryMs?: number;
  /**
   * A broker that cannot be reached at start() is retried (connectFailed reports it) instead of
   * failing the start, as hardware powered on during a service outage keeps trying: a scenario's
   * kit delivered while its broker is down. A refusal (E_BROKER_REFUSED) still fails it.
   */
  readonly keepTrying?: boolean;
  readonly keepaliveSeconds?: number;
}

export interface SessionEvents extends Record<string, unknown> {
  connected: { readonly at: number };
  disconnected: { readonly at: number; readonly reason: string };
  /** A downlink message; its payload is the raw bytes (the receiver parses with its schema). */
  message: { readonly topic: string; readonly payload: Buffer };
  /**
   * A connection attempt failed after start() (start() itself rejects on the first), its own or
   * MQTT.js's after the broker dropped the session: once per cause until connected again.
   */
  connectFailed: Error;
}

const DEFAULT_RETRY_MS = 30_000;
/**
 * A broker down for days (a scenario's outage) was tried every 30 s of Clock time, each a real
 * connection refused: thousands per modem, most of the run's wall time. 30 s doubles to 16 min.
 */
const MAX_BACKOFF = 32;

export class UplinkSession {
  readonly events = new TypedEvents<SessionEvents>();
  private client: MqttClient | undefined;
  private connecting: Promise<void> | undefined;
  /** The message of the last reconnection failure reported, until connected again. */
  private lastFailure: string | undefined;
  /** Aborts the connection attempt under way (stop() does, not to wait for a silent broker). */
  private attempt: AbortController | undefined;
  private retryTimer: TimerHandle | undefined;
  /** Connection attempts failed in a row (the retry backs off), until connected again. */
  private failuresInRow = 0;
  private started = false;
  private readonly pending = new Set<(error: Error) => void>();
  private readonly flights = new Set<Promise<void>>();
  private unlisten: (() => void) | undefined;

  constructor(private readonly options: UplinkSessionOptions) {}

  /** Connected to the broker, with the link up: publish() may be called. */
  get connected(): boolean {
    return this.client?.connected === true && this.options.link.up;
  }

  /**
   * Follows the link from now on; when the link is up, connects and resolves on the CONNACK,
   * or rejects with E_BROKER_UNAVAILABLE / E_BROKER_REFUSED, or with `signal`'s reason once it
   * aborts the wait (then nothing is left running).
   */
  async start(signal?: AbortSignal): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.unlisten = this.options.link.events.on("change", ({ up }) => {
      if (up) this.reconnect();
      else this.drop("cellular link down");
    });
    if (!this.options.link.up) return;
    const abort = () => this.attempt?.abort(signal?.reason);
    signal?.addEventListener("abort", abort, { once: true });
    try {
      signal?.throwIfAborted();
      await this.open();
    } catch (error) {
      if (
        this.options.keepTrying === true &&
        this.started &&
        isRpmlabError(error, "E_BROKER_UNAVAILABLE")
      ) {
        this.reconnectFailed(error as Error);
        this.retryLater();
        return;
      }
      await this.stop();
      throw error;
    } finally {
      signal?.removeEventListener("abort", abort);
    }
  }

  /**
   * Publishes at QoS 1 and resolves on the PUBACK. Rejects with E_CELLULAR_OFFLINE when the
   * link or the connection is down, or goes down before the PUBACK: the caller keeps the message
   * and sends it again later (a re-send may reach the broker twice; ids make that harmless).
   */
  publish(topic: string, payload: unknown, options: { retain?: boolean } = {}): Promise<void> {
    const client = this.client;
    if (client === undefined || !this.connected) {
      return Promise.reject(offline(`cannot publish to ${topic}: ${this.why()}`));
    }
    const flight = new Promise<void>((resolve, reject) => {
      let settled = false;
      const fail = (error: Error) => {
        if (settled) return;
        settled = true;
        this.pending.delete(fail);
        reject(error);
      };
      this.pending.add(fail);
      client.publish(
        topic,
        JSON.stringify(payload),
        { qos: TOPIC_QOS, retain: options.retain ?? false },
        (error) => {
          if (error !== undefined && error !== null) {
            fail(offline(`publish to ${topic} failed: ${error.message}`, error));
            return;
          }
          if (settled) return;
          settled = true;
          this.pending.delete(fail);
          resolve();
        },
      );
    });
    this.flights.add(flight);
    const land = () => this.flights.delete(flight);
    flight.then(land, land);
    return flight;
  }

  /** Resolves once every publish under way has its PUBACK or has failed. */
  async landed(): Promise<void> {
    await Promise.allSettled([...this.flights]);
  }

  /**
   * Resolves once no connection attempt is under way (tests step the Clock between them);
   * undefined when none is (see Drainer.settled).
   */
  settled(): Promise<void> | undefined {
    return this.connecting?.catch(() => {});
  }

  /** Ends with DISCONNECT (the broker discards the will, [MQTT-3.1.2-10]); stops following. */
  async stop(): Promise<void> {
    this.started = false;
    this.unlisten?.();
    this.unlisten = undefined;
    if (this.retryTimer !== undefined) this.options.clock.clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    // A broker that takes the TCP connection and never answers would hold the stop until the
    // connect timeout (10 s): the attempt is given up instead.
    this.attempt?.abort(offline("the session was stopped"));
    await this.settled();
    const client = this.client;
    this.client = undefined;
    this.failPending(offline("the session was stopped"));
    if (client === undefined) return;
    // MQTT.js's end(false) waits for every unacknowledged message: only when there is none.
    const graceful = client.connected && Object.keys(client.outgoing).length === 0;
    await client.endAsync(!graceful).catch(() => undefined);
  }

  private why(): string {
    if (!this.options.link.up) return `the cellular link is down (${this.options.link.cause})`;
    return "not connected to the broker";
  }

  private open(): Promise<void> {
    if (this.connecting !== undefined) return this.connecting;
    const o = this.options;
    const attempt = new AbortController();
    this.attempt = attempt;
    this.connecting = connectClient(o.url, {
      clientId: o.clientId,
      clean: false,
      ...(o.username === undefined ? {} : { username: o.username }),
      ...(o.password === undefined ? {} : { password: o.password }),
      ...(o.will === undefined
        ? {}
        : {
            will: {
              topic: o.will.topic,
              payload: Buffer.from(JSON.stringify(o.will.payload)),
              qos: TOPIC_QOS,
              retain: o.will.retain,
            },
          }),
      ...(o.keepaliveSeconds === undefined ? {} : { keepalive: o.keepaliveSeconds }),
      // Installed before CONNECT: a persistent session delivers queued downlink at once.
      prepare: (client) => this.watch(client),
      // MQTT.js's own reconnections (after the broker dropped us) fail here, not in open().
      onError: (error) => this.reconnectFailed(brokerError(error, o.url, o.clientId)),
      signal: attempt.signal,
    })
      .then(async (client) => {
        if (o.subscriptions !== undefined && o.subscriptions.length > 0) {
          await subscribeAll(client, o.subscriptions).catch(async (error: unknown) => {
            await client.endAsync(true);
            throw error;
          });
        }
        if (!this.started || !o.link.up) {
          // Stopped, or the link went down while connecting: off the network after all.
          client.end(true);
          return;
        }
        this.client = client;
        this.lastFailure = undefined;
        this.failuresInRow = 0;
        this.events.emit("connected", { at: o.clock.now() });
      })
      .finally(() => {
        this.connecting = undefined;
        if (this.attempt === attempt) this.attempt = undefined;
      });
    return this.connecting;
  }

  private watch(client: MqttClient): void {
    client.on("message", (topic, payload) => this.events.emit("message", { topic, payload }));
    client.on("close", () => {
      if (this.client !== client) return;
      this.failPending(offline("the connection to the broker closed before the PUBACK"));
      this.events.emit("disconnected", {
        at: this.options.clock.now(),
        reason: "connection closed",
      });
    });
    client.on("connect", () => {
      // MQTT.js reconnected by itself after the broker dropped us (the link stayed up).
      if (this.client !== client) return;
      this.lastFailure = undefined;
      this.failuresInRow = 0;
      this.events.emit("connected", { at: this.options.clock.now() });
    });
  }

  /**
   * Reported once per cause until connected again: MQTT.js retries each second, and a refusal
   * (a rotated password) would otherwise go on unseen, the modem merely quiet.
   */
  private reconnectFailed(failure: Error): void {
    if (failure.message === this.lastFailure) return;
    this.lastFailure = failure.message;
    this.events.emit("connectFailed", failure);
  }

  /** The modem left the network: the socket dies without DISCONNECT, so the will fires. */
  private drop(reason: string): void {
    if (this.retryTimer !== undefined) this.options.clock.clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const client = this.client;
    this.client = undefined;
    this.failPending(offline(`cannot publish: ${reason}`));
    if (client === undefined) return;
    client.end(true);
    this.events.emit("disconnected", { at: this.options.clock.now(), reason });
  }

  /**
   * The broker is known to be back (the lab restarted it): a connection waiting for its retry
   * tries now, not up to retryMs of Clock time later.
   */
  reconnectNow(): void {
    if (this.retryTimer === undefined) return;
    this.options.clock.clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (this.options.link.up) this.reconnect();
  }

  private reconnect(): void {
    if (!this.started || this.client !== undefined || this.connecting !== undefined) return;
    this.open().catch((error: unknown) => {
      // Given up by stop(): not a failure of the broker.
      if (!this.started) return;
      this.reconnectFailed(error as Error);
      this.retryLater();
    });
  }

  private retryLater(): void {
    if (this.retryTimer !== undefined) this.options.clock.clearTimeout(this.retryTimer);
    const backoff = Math.min(2 ** this.failuresInRow, MAX_BACKOFF);
    this.failuresInRow++;
    this.retryTimer = this.options.clock.setTimeout(
      () => {
        this.retryTimer = undefined;
        if (this.options.link.up) this.reconnect();
      },
      (this.options.retryMs ?? DEFAULT_RETRY_MS) * backoff,
    );
  }

  private failPending(error: Error): void {
    for (const fail of [...this.pending]) fail(error);
  }
}

function offline(message: string, cause?: unknown): RpmlabError {
  return new RpmlabError("E_CELLULAR_OFFLINE", message, {}, cause);
}
