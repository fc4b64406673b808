/**
 * The Security Manager Timer of the gateway's side of each link (Core Vol 3 Part H §3.4), which
 * noble lacks: started when its Pairing Request is queued, reset at each SMP command it queues
 * after (not at those it receives: §3.4 resets on reception of a Pairing Request alone, the
 * responder's), stopped when pairing ends: failed, or complete once the keys agreed on are
 * distributed (smp-key-distribution.ts), not at encryption. At 30 s the procedure has failed:
 * the local higher layer is told, no further SMP command goes out on that link, and a new
 * procedure needs a new link.
 * Time is the Clock the central was opened with (NobleCentral.open), virtual in scenarios.
 */
import type { Clock, TimerHandle } from "../../core/clock.ts";

/** §3.4: a Security Manager procedure not completed within 30 s has failed. */
export const SMP_TIMEOUT_MS = 30_000;

/** What a pairing refused on its account fails with, after its ATT error. */
export const SMP_TIMEOUT_REASON =
  "SMP timeout: pairing not completed within 30 s (Core Vol 3 Part H §3.4); no pairing on this link until it reconnects";

/** An SMP side of one connection, as far as the timer reaches its host (acl-stream.js). */
export interface TimedSmp {
  readonly _aclStream?: { readonly _hci?: object };
}

/** The clock of each noble host, by its Hci object, which every link's SMP side reaches. */
const clocks = new WeakMap<object, Clock>();
const running = new WeakMap<TimedSmp, { clock: Clock; handle: TimerHandle }>();
const timedOut = new WeakSet<TimedSmp>();

/** Times the SMP of every link of the noble host whose Hci object is `hci` on `clock`. */
export function timeSmpOn(hci: object, clock: Clock): void {
  clocks.set(hci, clock);
}

/** (Re)starts the link's timer; `onTimeout` runs if 30 s pass before the next (re)start or stop. */
export function restartSmpTimer(smp: TimedSmp, onTimeout: () => void): void {
  const hci = smp._aclStream?._hci;
  const clock = hci === undefined ? undefined : clocks.get(hci);
  if (clock === undefined) return;
  stopSmpTimer(smp);
  const handle = clock.setTimeout(() => {
    running.delete(smp);
    timedOut.add(smp);
    onTimeout();
  }, SMP_TIMEOUT_MS);
  running.set(smp, { clock, handle });
}

/** Stops the link's timer: the procedure ended (or the link did). */
export function stopSmpTimer(smp: TimedSmp): void {
  const timer = running.get(smp);
  if (timer === undefined) return;
  running.delete(smp);
  timer.clock.clearTimeout(timer.handle);
}

/** Whether the link's SMP timed out: it sends and takes no SMP command any more. */
export function smpTimedOut(smp: TimedSmp): boolean {
  return timedOut.has(smp);
}
