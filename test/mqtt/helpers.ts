import { randomBytes } from "node:crypto";
import type { IPublishPacket, MqttClient } from "mqtt";
import { connect } from "mqtt";

/** How long a test waits for something that should happen at once (a deadline, not a sleep). */
export const DEADLINE_MS = 10_000;

/** Rejects with `what` when `promise` has not settled by the deadline. */
export function within<T>(promise: Promise<T>, what: string, ms = DEADLINE_MS): Promise<T> {
  const signal = AbortSignal.timeout(ms);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/** Random upper-case hex: ids unique to this run on a shared broker (Mosquitto persists). */
export const hexId = (length: number): string =>
  randomBytes(Math.ceil(length / 2))
    .toString("hex")
    .toUpperCase()
    .slice(0, length);

/** A random 15-digit IMEI. */
export const imeiId = (): string =>
  Array.from(randomBytes(15), (b) => String(b % 10))
    .join("")
    .replace(/^0/, "3");

export interface Received {
  readonly topic: string;
  readonly payload: Buffer;
  readonly packet: IPublishPacket;
  /** Index of the receiving client among those the inbox watches. */
  readonly by: number;
}

/** Every message some clients receive, with a wait for "at least n" that has a deadline. */
export class Inbox {
  readonly messages: Received[] = [];
  private waiters: (() => void)[] = [];

  private watched = 0;

  constructor(...clients: MqttClient[]) {
    for (const client of clients) this.watch(client);
  }

  /**
   * Records what `client` receives. Watch before the client connects when a session may hold
   * messages: MQTT.js delivers them right after the CONNACK, before an awaited connect resumes.
   */
  watch(client: MqttClient): void {
    const by = this.watched++;
    client.on("message", (topic, payload, packet) => {
      this.messages.push({ topic, payload, packet, by });
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  /** Resolves once `predicate` holds over the messages so far. */
  until(predicate: (messages: readonly Received[]) => boolean, what: string): Promise<void> {
    const check = (resolve: () => void) => {
      if (predicate(this.messages)) resolve();
      else this.waiters.push(() => check(resolve));
    };
    return within(new Promise<void>(check), what);
  }

  count(n: number, what = `${n} messages`): Promise<void> {
    return this.until((m) => m.length >= n, what);
  }

  onTopic(topic: string): Received[] {
    return this.messages.filter((m) => m.topic === topic);
  }
}

/** Ends every client a test opened, forcefully (a test never waits on a broker's goodbye). */
export class Clients {
  private readonly open: MqttClient[] = [];

  add<T extends MqttClient>(client: T): T {
    this.open.push(client);
    return client;
  }

  async endAll(): Promise<void> {
    await Promise.all(this.open.splice(0).map((c) => c.endAsync(true)));
  }
}

/**
 * Cuts a client's connection the way a crash or a lost link does: no DISCONNECT, so the broker
 * publishes its will and keeps its unacknowledged messages for the session.
 */
export function killConnection(client: MqttClient): Promise<void> {
  const closed = new Promise<void>((resolve) => client.once("close", () => resolve()));
  client.options.reconnectPeriod = 0;
  client.stream.destroy();
  return within(closed, "the connection to close");
}

/** Whether something accepts an MQTT connection at `url` (a reason when not). */
export async function probeBroker(url: string): Promise<string | null> {
  const client = connect(url, {
    protocolVersion: 4,
    clientId: `rpmlab-probe-${hexId(8)}`,
    reconnectPeriod: 0,
    connectTimeout: 3000,
  });
  const outcome = await new Promise<string | null>((resolve) => {
    client.once("connect", () => resolve(null));
    client.once("error", (error) => resolve(error.message || String(error)));
    client.once("close", () => resolve("connection closed"));
  });
  await client.endAsync(true);
  return outcome;
}
