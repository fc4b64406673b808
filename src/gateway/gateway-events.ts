import type { RpmlabError } from "../core/errors.ts";
import type { SessionResult } from "./ble-session.ts";
import type { WhitelistChange } from "./device-rules.ts";
import type { AssembledReading } from "./reading-assembler.ts";

/** What a Gateway tells its listeners (src/gateway/gateway.ts), and the counters it keeps. */
export interface GatewayEvents extends Record<string, unknown> {
  /** A reading left a device and is queued for the uplink. */
  reading: { readonly reading: AssembledReading; readonly at: number };
  /** The whitelist from the service was applied. */
  whitelist: WhitelistChange & { readonly at: number };
  checkin: { readonly at: number; readonly signal: number };
  session: {
    readonly address: string;
    readonly at: number;
    readonly result: SessionResult | null;
    readonly error: string | null;
  };
  /**
   * The state file could not be written (a full disk): the change is held in memory and the
   * gateway goes on; a restart would miss it (the service sends the whitelist again).
   */
  stateNotSaved: { readonly at: number; readonly error: RpmlabError };
  /**
   * A reading the outbox could not take (a full disk): the visit's last sequence is not kept,
   * so the next visit asks the device for those records again instead of skipping them.
   */
  readingNotQueued: { readonly at: number; readonly address: string; readonly error: RpmlabError };
  /** A downlink off its topic or schema was refused and changed nothing: the error names why. */
  downlinkRefused: { readonly at: number; readonly error: RpmlabError };
}

/** Counters a drill or a dashboard reads (all cumulative since start, except gauges). */
export interface GatewayStats {
  readonly readings: number;
  readonly clockUnsetReadings: number;
  readonly sessions: number;
  readonly sessionFailures: number;
  readonly deviceClocksSet: number;
  /** Time downlinks that moved the gateway clock (those within the round trip do not). */
  readonly clockCorrections: number;
  readonly checkins: number;
  readonly checkinFailures: number;
  readonly downlinks: { readonly whitelist: number; readonly time: number; readonly bad: number };
  readonly whitelist: { readonly held: number; readonly refusedEntries: number };
  /** Gauges: readings waiting now; dropped over the outbox's life (on disk too). */
  readonly outbox: { readonly queued: number; readonly dropped: number };
  readonly uplink: {
    readonly messages: number;
    readonly readings: number;
    readonly failures: number;
    readonly resent: number;
  };
  readonly link: { readonly up: boolean; readonly signal: number; readonly cause: string };
}
