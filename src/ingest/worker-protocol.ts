import type { Profile } from "../catalogue/schema.ts";
import { ERROR_CODES, type ErrorCode, type ErrorDetails, RpmlabError } from "../core/errors.ts";
import type { BatchResult } from "./events.ts";
import type { Inbound } from "./prepare.ts";

/** What the ingestion worker starts with (tsWorkerData). */
export interface WorkerInit {
  /** The store to open: the same database as the main thread's (a `sqlite:PATH` file). */
  readonly storeSpec: string;
  /** The catalogue, as data (a Catalogue is rebuilt from it in the thread). */
  readonly profiles: readonly Profile[];
  readonly now: number;
}

export type ToWorker =
  /** `now`: the main clock's time, for what the store stamps itself (RelayedClock). */
  | {
      readonly kind: "batch";
      readonly id: number;
      readonly now: number;
      readonly batch: readonly Inbound[];
    }
  | { readonly kind: "stop" };

export type FromWorker =
  | { readonly kind: "ready" }
  | { readonly kind: "failed"; readonly error: WireError }
  | { readonly kind: "done"; readonly id: number; readonly result: BatchResult }
  | { readonly kind: "error"; readonly id: number; readonly error: WireError };

/**
 * An error as it crosses threads. Structured cloning keeps an Error's message but not its own
 * properties, and the ingestor decides on the code (E_STORE_UNAVAILABLE is retried, anything
 * else isolates the poison message), so the code and details travel explicitly.
 */
export interface WireError {
  readonly name: string;
  readonly message: string;
  readonly code?: string;
  readonly details?: ErrorDetails;
}

export function toWire(error: unknown): WireError {
  if (!(error instanceof Error)) return { name: "Error", message: String(error) };
  const code = (error as { code?: unknown }).code;
  const details = (error as { details?: unknown }).details;
  return {
    name: error.name,
    message: error.message,
    ...(typeof code === "string" ? { code } : {}),
    // Details are plain data by convention; JSON keeps them cloneable whatever they hold.
    ...(details === undefined ? {} : { details: JSON.parse(JSON.stringify(details)) }),
  };
}

export function fromWire(wire: WireError): Error {
  if (wire.name === "RpmlabError" && wire.code !== undefined && wire.code in ERROR_CODES) {
    return new RpmlabError(wire.code as ErrorCode, wire.message, wire.details ?? {});
  }
  const error = new Error(wire.message);
  error.name = wire.name;
  if (wire.code !== undefined) Object.assign(error, { code: wire.code });
  return error;
}
