import type { Clock } from "../core/clock.ts";
import { RpmlabError } from "../core/errors.ts";
import { epochFromUtc } from "../core/time.ts";
import {
  currentTimeAt,
  decodeCurrentTime,
  encodeCurrentTime,
} from "../gatt/characteristics/current-time.ts";
import { decodeRacp, encodeRacp, type RacpMessage } from "../gatt/characteristics/racp.ts";
import { recordSequenceOf, sequenceAtOrAfter } from "../gatt/record-sequence.ts";
import { MEASUREMENT_UUIDS, SIG } from "../gatt/uuids.ts";
import type { GattLink } from "./gatt-link.ts";
import type { RawCharacteristicValue } from "./raw-values.ts";
import { RequestQueue } from "./request-queue.ts";

export interface SessionTimeouts {
  discover: number;
  request: number;
  /** From the RACP write to its final response. */
  racp: number;
}

export const DEFAULT_TIMEOUTS: SessionTimeouts = { discover: 10_000, request: 5_000, racp: 30_000 };

/**
 * A device clock further than this from the gateway's when the gateway reads it is "unset": a
 * fresh battery, or a clock never set (meters typically start at 2000-01-01). Drift alone stays
 * well inside it (20 ppm is under a minute a month).
 */
export const CLOCK_UNSET_THRESHOLD_MS = 5 * 60_000;

export interface SessionOptions {
  clock: Clock;
  /** The gateway's own time (its clock, set from the service's time downlink). Default clock.now. */
  gatewayTime?: () => number;
  sensorCode: string | undefined;
  /**
   * Whether the device type keeps readings while out of range (spec 2.8); default true. One that
   * does not sends only readings taken during the visit, after its clock was set.
   */
  storesOffline?: boolean;
  /** Highest record sequence the gateway holds for this device; RACP asks for the ones after. */
  lastSequence: number | undefined;
  timeouts?: Partial<SessionTimeouts>;
  /** How long to stay connected for live readings after the stored ones, ms (0: leave at once). */
  lingerMs?: number;
  onValue: (value: RawCharacteristicValue) => void;
}

export interface SessionResult {
  services: string[];
  /** ATT_MTU after the exchange noble starts on connection (Vol 3 Part F §3.4.2). */
  mtu: number | null;
  timeSet: boolean;
  /** Device time minus gateway time, read from Current Time before the gateway set it. */
  clockErrorMs: number | null;
  /**
   * The device's clock was unset (off by more than CLOCK_UNSET_THRESHOLD_MS) when the visit
   * began. The values of readings it kept from before are marked (RawCharacteristicValue
   * clockUnset): those fetched through RACP, and, from a device without RACP (it flushes its
   * store when the central subscribes, BLS 1.1 §3.1.1), everything before the linger; and every
   * value of the visit when the gateway could not set the clock (timeSet false).
   */
  clockUnset: boolean;
  stored: number;
  live: number;
  lastSequence: number | undefined;
  /** RACP outcome: response code name, or "none" without RACP. */
  racp: string;
}

const RACP = SIG.characteristics.recordAccessControlPoint;
/** Pushed characteristics whose values are no readings: the gateway does not subscribe to them. */
const NOT_READINGS: ReadonlySet<string> = new Set([
  SIG.characteristics.currentTime,
  SIG.characteristics.intermediateCuffPressure,
]);

/**
 * One gateway visit to a device over an open link: discover, set the device clock (Current Time),
 * subscribe to everything it pushes (Current Time aside), fetch stored records through RACP since the last sequence
 * held (or take the stored measurements a device without RACP flushes on subscription), collect
 * live readings for `lingerMs`, disconnect. Every request goes through the device's queue, timed
 * from when it is sent.
 */
export async function runSession(link: GattLink, options: SessionOptions): Promise<SessionResult> {
  const t = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const queue = new RequestQueue(options.clock, link.address);
  const result: SessionResult = {
    services: [],
    mtu: null,
    timeSet: false,
    clockErrorMs: null,
    clockUnset: false,
    stored: 0,
    live: 0,
    lastSequence: options.lastSequence,
    racp: "none",
  };
  // Only RACP tells stored records from live ones; a device that flushes its stored
  // measurements on subscription (BLS, WSS) sends them like live ones, as real collectors see.
  let phase: "stored" | "live" = "live";
  /** Until the linger: a device without RACP is flushing what it kept. */
  let beforeLinger = true;
  let hasRacp = false;
  const racpResponses: RacpMessage[] = [];
  const racpWaiters = new Set<() => void>();
  const dropped = new Promise<never>((_, reject) =>
    link.onDisconnect(() => {
      const error = new Error(`${link.address} disconnected`);
      queue.close(error);
      reject(error);
    }),
  );
  dropped.catch(() => undefined);
  const run = <T>(op: string, timeout: number, send: () => Promise<T>): Promise<T> =>
    Promise.race([queue.run(op, timeout, send), dropped]);

  const services = await run("discover", t.discover, () => link.discover());
  result.services = [...services.keys()];
  result.mtu = link.mtu;
  const all = [...services.values()].flat();

  const gatewayTime = options.gatewayTime ?? (() => options.clock.now());
  if (all.includes(SIG.characteristics.currentTime)) {
    // Read before writing: readings the device kept were stamped by the clock it has now.
    const shown = await run("read Current Time", t.request, () =>
      link.read(SIG.characteristics.currentTime),
    );
    try {
      const ct = decodeCurrentTime(shown);
      const deviceMs = epochFromUtc({
        ...ct.dateTime,
        milliseconds: Math.floor((ct.fractions256 * 1000) / 256),
      });
      result.clockErrorMs = deviceMs - gatewayTime();
    } catch {
      // A value that does not decode (year 0, "unknown" fields) is a clock that was never set.
      result.clockErrorMs = null;
    }
    result.clockUnset =
      result.clockErrorMs === null || Math.abs(result.clockErrorMs) > CLOCK_UNSET_THRESHOLD_MS;
    const now = encodeCurrentTime(currentTimeAt(gatewayTime()));
    try {
      await run("write Current Time", t.request, () =>
        link.write(SIG.characteristics.currentTime, now),
      );
      result.timeSet = true;
    } catch (error) {
      // A device may keep its own time: CTS 1.1 lets Current Time be read-only, and a server
      // that ignores the value answers 0x80 (Data field ignored). The visit goes on; its
      // readings keep the clock the device has (clockUnset says whether to trust it).
      if (!(error instanceof RpmlabError && error.details.attError !== undefined)) throw error;
    }
  }

  const onValue = (uuid: string) => (value: Buffer) => {
    const sequence = recordSequenceOf(uuid, value);
    if (
      sequence !== undefined &&
      (result.lastSequence === undefined ||
        (sequence !== result.lastSequence && sequenceAtOrAfter(sequence, result.lastSequence)))
    ) {
      result.lastSequence = sequence;
    }
    if (phase === "stored") result.stored++;
    else result.live++;
    options.onValue({
      deviceAddress: link.address,
      sensorCode: options.sensorCode,
      uuid,
      value: new Uint8Array(value),
      receivedAt: gatewayTime(),
      sequence,
      stored: phase === "stored",
      // A clock the gateway could not set (read-only Current Time, CTS 1.1) stays wrong for
      // the whole visit: its live readings too carry a time not to trust (envelope clock_unset).
      clockUnset:
        result.clockUnset &&
        (!result.timeSet ||
          (options.storesOffline !== false && (phase === "stored" || (beforeLinger && !hasRacp)))),
    });
  };

  // Current Time notifies (CTS 1.1 §3.1) when its clock is set: the gateway is the time source
  // and its notifications are no readings, so it is not subscribed to (nor relayed). Nor is
  // Intermediate Cuff Pressure (BLS 1.1 §3.2): the cuff's pressure while it inflates and
  // deflates, for a display — a hub has none, BLP 1.1 leaves its CCCD to the collector, and each
  // relayed value was a reading no mapping decodes (a dead letter per measurement).
  const pushed = [...services.entries()]
    .flatMap(([, chars]) => chars)
    .filter((u) => u !== RACP && !NOT_READINGS.has(u));
  hasRacp = all.includes(RACP);
  if (hasRacp) {
    await run("subscribe RACP", t.request, () =>
      link.subscribe(RACP, (value) => {
        try {
          racpResponses.push(decodeRacp(value));
        } catch {
          return;
        }
        for (const wake of racpWaiters) wake();
      }),
    );
  }
  // The measurements last: a device sends what it stored once their CCCD is on (BLS 1.1
  // §3.1.1), and the extras that go with each (battery, context) must be heard by then.
  const inOrder = [...new Set(pushed)].sort(
    (a, b) => Number(MEASUREMENT_UUIDS.has(a)) - Number(MEASUREMENT_UUIDS.has(b)),
  );
  for (const uuid of inOrder) {
    if (!link.canSubscribe(uuid)) continue;
    await run(`subscribe ${uuid}`, t.request, () => link.subscribe(uuid, onValue(uuid)));
  }

  if (hasRacp) {
    const from =
      options.lastSequence === undefined ? undefined : (options.lastSequence + 1) & 0xffff;
    const request = encodeRacp(
      from === undefined
        ? { opCode: "report_stored_records", operator: "all_records" }
        : {
            opCode: "report_stored_records",
            operator: "greater_than_or_equal_to",
            filter: { type: "sequence_number", value: from },
          },
    );
    const seen = racpResponses.length;
    phase = "stored";
    await run("write RACP", t.request, () => link.write(RACP, request));
    const answer = await Promise.race([
      queue.waitFor<RacpMessage>("RACP report stored records", t.racp, (resolve) => {
        const check = (): void => {
          const hit = racpResponses.slice(seen).find((m) => m.opCode === "response_code");
          if (hit !== undefined) resolve(hit);
        };
        racpWaiters.add(check);
        check();
        return () => racpWaiters.delete(check);
      }),
      dropped,
    ]);
    result.racp = answer.opCode === "response_code" ? answer.responseCode : answer.opCode;
  }

  phase = "live";
  beforeLinger = false;
  if ((options.lingerMs ?? 0) > 0)
    await Promise.race([options.clock.sleep(options.lingerMs ?? 0), dropped]);
  await run("disconnect", t.request, () => link.disconnect()).catch(() => undefined);
  return result;
}
