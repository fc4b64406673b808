/** ATT error codes by value (Vol 3 Part F §3.4.1.1), for the errors the client guard names. */
const ATT_ERRORS = [
  "",
  "Invalid Handle",
  "Read Not Permitted",
  "Write Not Permitted",
  "Invalid PDU",
  "Insufficient Authentication",
  "Request Not Supported",
  "Invalid Offset",
  "Insufficient Authorization",
  "Prepare Queue Full",
  "Attribute Not Found",
  "Attribute Not Long",
  "Encryption Key Size Too Short",
  "Invalid Attribute Value Length",
  "Unlikely Error",
  "Insufficient Encryption",
  "Unsupported Group Type",
  "Insufficient Resources",
];

/** "ATT error 0x02 (Read Not Permitted)"; application and profile codes by value alone. */
export function attErrorText(code: number): string {
  const name = ATT_ERRORS[code];
  return `ATT error 0x${code.toString(16).padStart(2, "0")}${name ? ` (${name})` : ""}`;
}

/**
 * A request the peer refused with an Error Response: its code, named in the message, and why it
 * stands when the client could not get past it (pairing timed out).
 */
export class AttError extends Error {
  constructor(
    readonly attCode: number,
    reason?: string,
  ) {
    super(`${attErrorText(attCode)}${reason === undefined ? "" : `: ${reason}`}`);
    this.name = "AttError";
  }
}

const ERROR_RESPONSE = 0x01;

/** Error Responses a request completes with, with why the client stopped at them. */
const reasons = new WeakMap<Buffer, string>();

/** A copy of the Error Response `response` that fails its request naming `reason` too. */
export function withReason(response: Buffer, reason: string): Buffer {
  const copy = Buffer.from(response);
  reasons.set(copy, reason);
  return copy;
}

/** Why a request failed: the code of its Error Response, named, or the response it got instead. */
export function attFailure(response: Buffer): Error {
  if (response[0] === ERROR_RESPONSE) return new AttError(response[4]!, reasons.get(response));
  return new Error(`unexpected ATT response 0x${response[0]!.toString(16).padStart(2, "0")}`);
}
