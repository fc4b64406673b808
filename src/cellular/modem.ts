import type { Clock } from "../core/clock.ts";
import { SystemClock } from "../core/clock.ts";
import type { Rng } from "../core/rng.ts";
import { Drainer, type DrainerOptions } from "./drain.ts";
import { CellularLink, type CellularLinkOptions } from "./link.ts";
import { drawModemIdentity, type ModemIdentity } from "./modem-identity.ts";
import { type Outbox, type OutboxEntry, type OutboxOptions, openOutbox } from "./outbox.ts";
import { UplinkSession, type UplinkSessionOptions } from "./uplink-session.ts";

/**
 * What a gateway and a direct-cellular device both have: a modem. Its identity, its cellular
 * link, a store-and-forward outbox, an MQTT session and the drainer between them, started and
 * stopped together (link → session → drainer; stopped in reverse).
 *
 * ```ts
 * const modem = await Modem.open({ clock, rng: rng.fork(`modem:${imei}`), broker, outbox, envelope });
 * await modem.start();
 * modem.send(reading); // queued, sent when the link is up
 * ```
 */
/** Where a gateway or cellular device connects, and as whom. */
export interface ModemBroker {
  readonly url: string;
  readonly username?: string;
  readonly password?: string;
  /** A broker down at power-on is retried, not a failed start (UplinkSession keepTrying). */
  readonly keepTrying?: boolean;
}

export interface ModemOptions<T> {
  readonly clock: Clock;
  /** Fork it per gateway or device: identity and link draw from it. */
  readonly rng: Rng;
  /** Parts of the identity that are known (e.g. the activated IMEI); the rest is drawn. */
  readonly identity?: Partial<ModemIdentity>;
  readonly link?: Omit<CellularLinkOptions, "clock" | "rng">;
  /** The MQTT session, less what the modem provides itself. */
  readonly broker: Omit<UplinkSessionOptions, "link" | "clock">;
  /** Capacity, and a directory to keep it on disk (undefined: in memory). */
  readonly outbox: Pick<OutboxOptions, "capacity" | "dir" | "name" | "check">;
  readonly envelope: DrainerOptions<T>["envelope"];
  readonly maxBatch?: number;
  readonly retryMs?: number;
}

export class Modem<T> {
  private constructor(
    readonly identity: ModemIdentity,
    readonly link: CellularLink,
    readonly outbox: Outbox<T>,
    readonly session: UplinkSession,
    readonly drainer: Drainer<T>,
  ) {}

  /** Builds the parts and opens the outbox (E_OUTBOX_UNAVAILABLE when its file cannot be). */
  static async open<T>(options: ModemOptions<T>): Promise<Modem<T>> {
    const { clock, rng } = options;
    const identity = drawModemIdentity(rng.fork("identity"), options.identity);
    const link = new CellularLink({ ...options.link, clock, rng: rng.fork("link") });
    const outbox = await openOutbox<T>({ ...options.outbox, clock, rng: rng.fork("outbox") });
    const session = new UplinkSession({ ...options.broker, link, clock });
    const drainer = new Drainer<T>({
      outbox,
      link,
      session,
      clock,
      envelope: options.envelope,
      ...(options.maxBatch === undefined ? {} : { maxBatch: options.maxBatch }),
      ...(options.retryMs === undefined ? {} : { retryMs: options.retryMs }),
    });
    return new Modem(identity, link, outbox, session, drainer);
  }

  /**
   * Powers on: the link comes up, the session connects (rejects with E_BROKER_UNAVAILABLE or
   * E_BROKER_REFUSED on the first attempt, or with `signal`'s reason when it aborts the wait for
   * the CONNACK; then nothing is left running), the drainer sends.
   */
  async start(signal?: AbortSignal): Promise<void> {
    this.link.start();
    try {
      await this.session.start(signal);
    } catch (error) {
      this.link.stop();
      throw error;
    }
    this.drainer.start();
  }

  /** Queues an item (the oldest is dropped when full) and sends when it can. */
  send(item: T): OutboxEntry<T> {
    const entry = this.outbox.enqueue(item);
    this.drainer.kick();
    return entry;
  }

  /** Powers off: what is queued stays in the outbox (on disk: until the next start). */
  async stop(): Promise<void> {
    // No new sends from here; the session's stop fails a publication still waiting for its
    // PUBACK (it stays queued), so a broker that never answers cannot hold the stop.
    const drained = this.drainer.stop();
    await this.session.stop();
    await drained;
    this.link.stop();
    this.outbox.close();
  }
}

/**
 * Resolves once every modem whose link is up has its broker session back (after a broker
 * restart or outage), or after `wallMs` of real time. MQTT.js reconnects on its own real-time
 * period, while a virtual clock left to run would move on by hours meanwhile.
 */
export async function sessionsBack(
  modems: readonly Pick<Modem<unknown>, "link" | "session">[],
  wallMs: number,
): Promise<void> {
  const down = modems.filter((m) => m.link.up && !m.session.connected);
  // Those waiting for their next retry on the Clock, which does not move while this waits.
  for (const m of down) m.session.reconnectNow();
  const waits = down.map(
    (m) => new Promise<void>((resolve) => m.session.events.once("connected", () => resolve())),
  );
  if (waits.length === 0) return;
  const clock = new SystemClock();
  try {
    await Promise.race([Promise.all(waits), clock.sleep(wallMs)]);
  } finally {
    clock.dispose();
  }
}
