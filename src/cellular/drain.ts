import type { Clock, TimerHandle } from "../core/clock.ts";
import { TypedEvents } from "../core/events.ts";
import { MAX_READINGS } from "../mqtt/envelope.ts";
import type { CellularLink } from "./link.ts";
import type { Outbox, OutboxBatch } from "./outbox.ts";
import type { UplinkSession } from "./uplink-session.ts";

/**
 * Store-and-forward's forward half: while the link is up and the session connected, publish the
 * oldest batch, wait for the PUBACK, remove it, repeat. A batch that fails stays in the outbox
 * and is retried as the same entries (so the same message id) on the Clock, or as soon as the
 * link or the connection comes back. After an outage the backlog leaves oldest first.
 */
export interface DrainerOptions<T> {
  readonly outbox: Outbox<T>;
  readonly link: CellularLink;
  readonly session: UplinkSession;
  readonly clock: Clock;
  /** The topic and payload of one batch (use gatewayUplink / cellularUplink of src/mqtt). */
  readonly envelope: (
    batch: OutboxBatch<T>,
    sentAt: number,
  ) => { readonly topic: string; readonly payload: unknown };
  /** Items per message, 1 to MAX_READINGS (default). */
  readonly maxBatch?: number;
  /** After a failed publish, the next attempt (Clock ms); default 30 s. */
  readonly retryMs?: number;
}

export interface DrainEvents extends Record<string, unknown> {
  /** A batch was acknowledged (PUBACK) and left the outbox. */
  sent: { readonly messageId: string; readonly items: number; readonly at: number };
  /** A batch was not acknowledged; it stays queued. */
  failed: { readonly messageId: string; readonly error: Error; readonly at: number };
}

export interface DrainStats {
  /** Messages acknowledged. */
  readonly messages: number;
  /** Items in those messages. */
  readonly items: number;
  /** Publications that failed (each is retried). */
  readonly failures: number;
  /** Publications of a message id already published once (retries after a failure). */
  readonly resent: number;
}

const DEFAULT_RETRY_MS = 30_000;

export class Drainer<T> {
  readonly events = new TypedEvents<DrainEvents>();
  private readonly stats = { messages: 0, items: 0, failures: 0, resent: 0 };
  private running: Promise<void> | undefined;
  private again = false;
  private started = false;
  /** The batch that failed: retried as exactly these entries until it is acknowledged. */
  private pinned: { lastSeq: number } | undefined;
  private retryTimer: TimerHandle | undefined;
  private inFlight: Promise<void> | undefined;
  /** The message id last handed to the session, until it is acknowledged. */
  private lastPublished: string | undefined;
  private readonly unlisten: (() => void)[] = [];

  constructor(private readonly options: DrainerOptions<T>) {}

  get counts(): DrainStats {
    return { ...this.stats };
  }

  /** Starts following the link and the session; sends what is queued when it can. */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.unlisten.push(
      this.options.link.events.on("change", ({ up }) => {
        if (up) this.retryNow();
      }),
      this.options.session.events.on("connected", () => this.retryNow()),
    );
    this.kick();
  }

  /** Sends what is queued, if it can now (call after enqueue). */
  kick(): void {
    if (!this.started) return;
    if (this.running !== undefined) {
      // The loop may be on its way out (its end runs a microtask later): look once more.
      this.again = true;
      return;
    }
    this.again = false;
    this.running = this.loop()
      .catch((error: unknown) => this.loopFailed(error))
      .finally(() => {
        this.running = undefined;
        if (this.again) this.kick();
      });
  }

  /**
   * Resolves once no publication is in flight; undefined when none is, so a scenario's step
   * over a thousand modems awaits only those with one. The loop may still wait on the Clock
   * (latency, retry): tests step the Clock, then await this, and repeat.
   */
  settled(): Promise<void> | undefined {
    return this.inFlight?.catch(() => {});
  }

  /** Stops sending; what is queued stays queued. Resolves when the current attempt ends. */
  async stop(): Promise<void> {
    this.started = false;
    for (const off of this.unlisten.splice(0)) off();
    if (this.retryTimer !== undefined) this.options.clock.clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    await this.settled();
  }

  private canSend(): boolean {
    return this.started && this.options.link.up && this.options.session.connected;
  }

  private async loop(): Promise<void> {
    const { outbox, link, session, clock } = this.options;
    while (this.canSend() && outbox.size > 0 && this.retryTimer === undefined) {
      const max = this.options.maxBatch ?? MAX_READINGS;
      let batch = outbox.take(max, this.pinned?.lastSeq);
      if (batch === null && this.pinned !== undefined) {
        // The full outbox dropped every entry of the batch waiting to go again: nothing of it
        // is left to send, and what came after goes as a new message.
        this.pinned = undefined;
        this.lastPublished = undefined;
        batch = outbox.take(max);
      }
      if (batch === null) return;
      const { topic, payload } = this.options.envelope(batch, clock.now());
      // The modem's transfer takes latency plus size over bandwidth, in Clock time.
      await clock.sleep(link.transferMs(JSON.stringify(payload).length));
      this.pinned = { lastSeq: batch.lastSeq };
      if (!this.canSend()) return;
      if (this.lastPublished === batch.messageId) this.stats.resent++;
      this.lastPublished = batch.messageId;
      this.inFlight = session.publish(topic, payload);
      try {
        await this.inFlight;
      } catch (error) {
        this.stats.failures++;
        this.events.emit("failed", {
          messageId: batch.messageId,
          error: error as Error,
          at: clock.now(),
        });
        this.scheduleRetry();
        return;
      } finally {
        this.inFlight = undefined;
      }
      outbox.remove(batch);
      this.pinned = undefined;
      this.lastPublished = undefined;
      this.stats.messages++;
      this.stats.items += batch.entries.length;
      this.events.emit("sent", {
        messageId: batch.messageId,
        items: batch.entries.length,
        at: clock.now(),
      });
    }
  }

  /**
   * Reading the outbox or building the envelope threw (a disk read error, an item the envelope
   * refuses): reported and tried again on the Clock, never an unhandled rejection that ends the
   * process; the items stay queued.
   */
  private loopFailed(error: unknown): void {
    this.stats.failures++;
    this.events.emit("failed", {
      messageId: this.lastPublished ?? "",
      error: error instanceof Error ? error : new Error(String(error)),
      at: this.options.clock.now(),
    });
    this.scheduleRetry();
  }

  /** The link or the connection came back: no need to wait for the retry timer. */
  private retryNow(): void {
    if (this.retryTimer !== undefined) this.options.clock.clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.kick();
  }

  private scheduleRetry(): void {
    if (!this.started || this.retryTimer !== undefined) return;
    this.retryTimer = this.options.clock.setTimeout(() => {
      this.retryTimer = undefined;
      this.kick();
    }, this.options.retryMs ?? DEFAULT_RETRY_MS);
  }
}
