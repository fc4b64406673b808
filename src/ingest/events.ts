import type { GatewayRow } from "../store/types-hardware.ts";
import type { DeadLetterRow } from "../store/types-ingest.ts";

/** What one committed batch did, message by message (in arrival order). */
export type MessageOutcome =
  /** An uplink: its new rows, its re-sent rows, and a dead letter when some reading failed. */
  | {
      readonly kind: "uplink";
      readonly messageId: string;
      readonly stored: number;
      readonly duplicates: number;
      readonly deadLetter: DeadLetterRow | null;
    }
  /** An uplink whose message id was already ingested: nothing stored (DESIGN "Uplink"). */
  | { readonly kind: "redelivered"; readonly messageId: string }
  /** A check-in (online) or the gateway's last will (offline). */
  | {
      readonly kind: "status";
      readonly gateway: GatewayRow;
      readonly online: boolean;
      /** The check-in reported holding exactly the service's whitelist (nothing to resend). */
      readonly whitelistHeld: boolean;
      /** When the service received it (its clock; the gateway's last_checkin_time). */
      readonly receivedAt: number;
      /** The gateway's own clock at the check-in (`checkin_at`; null for the last will). */
      readonly checkinAt: number | null;
    }
  /** A zero-length retained message clearing a status topic. */
  | { readonly kind: "ignored"; readonly reason: string }
  | { readonly kind: "dead_letter"; readonly deadLetter: DeadLetterRow }
  /** A replay of a dead letter that was gone by then (deleted, or replayed meanwhile). */
  | { readonly kind: "gone"; readonly deadLetterId: number };

/**
 * A measurement row a batch stored, as the ingestion core announces it: what to count, find and
 * route it by. The row itself is read from the store (measurements.get): a batch stores
 * thousands, and carrying whole rows (raw bytes included) from the ingestion worker thread cost
 * more than committing them (test/bench/ingest.ts).
 */
export interface StoredMeasurement {
  readonly id: number;
  /** Null for an orphan reading (no account yet). */
  readonly accountId: string | null;
  /** Null for an orphan reading (no device yet). */
  readonly deviceId: string | null;
  /** Gateway uuid or IMEI the reading arrived through. */
  readonly hardwareUuid: string;
  readonly metric: string;
  readonly timestamp: number;
}

export interface BatchResult {
  readonly outcomes: readonly MessageOutcome[];
  /** Rows this batch stored, in insertion order. */
  readonly stored: readonly StoredMeasurement[];
  readonly deadLetters: readonly DeadLetterRow[];
  readonly gateways: readonly GatewayRow[];
}

/** Events of the ingestion core (TypedEvents). Each fires after its batch committed. */
export type IngestEvents = {
  /** New measurement rows (the dashboard, scenario expectations). */
  "measurement.stored": { readonly rows: readonly StoredMeasurement[] };
  dead_letter: { readonly row: DeadLetterRow };
  /** A status message applied: a check-in (online) or the last will (offline). */
  "gateway.status": {
    readonly gateway: GatewayRow;
    readonly online: boolean;
    /** The check-in reported holding exactly the service's whitelist (nothing to resend). */
    readonly whitelistHeld: boolean;
    /** When the service received it (its clock). */
    readonly receivedAt: number;
    /** The gateway's own clock at the check-in (`checkin_at`; null for the last will). */
    readonly checkinAt: number | null;
  };
  /** Every committed batch, acknowledged to the broker just before. */
  batch: BatchResult;
  /**
   * The store refused a message and then its dead letter (not an outage): the message was
   * acknowledged and logged whole (payload in base64) at error level, its only record.
   */
  message_refused: { readonly topic: string; readonly error: unknown };
  /** The store failed a batch; nothing of it was acknowledged; it is retried after `retryInMs`. */
  store_error: { readonly error: unknown; readonly retryInMs: number };
};
