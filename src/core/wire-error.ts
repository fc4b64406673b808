import { ERROR_CODES, type ErrorCode, type ErrorDetails, RpmlabError } from "./errors.ts";

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
