/**
 * One catalogue of error codes for the whole lab. Codes are stable: users match on them in
 * scripts and CI logs, so a code is never renamed or reused; the README lists them (a test keeps
 * the two in sync).
 */
export const ERROR_CODES = {
  E_CONFIG_INVALID: "A configuration value or command-line option is invalid.",
  E_USAGE: "A command was called with missing or contradictory arguments.",
  E_PROFILE_INVALID:
    "A device profile, patient model or supply catalogue (profiles/supplies.yaml) file does not match its schema.",
  E_PROFILE_NOT_FOUND: "No device profile or patient model has that name.",
  E_SCENARIO_INVALID:
    "A scenario file is not valid YAML, does not match the scenario schema, or breaks a rule across its fields (each problem is listed as file:line:column: path: message), or asks for transports no run can drive (a real radio, broker faults on an external broker, a store that already holds a lab).",
  E_SCENARIO_FAILED:
    "A scenario could not be run to its end: the lab refused a step the scenario needs (an activation, an account), or a part of the lab failed.",
  E_SCENARIO_EXPECTATIONS:
    "A scenario ran to its end and at least one of its expectations did not hold (the report lists each with its actual value).",
  E_CODEC_TRUNCATED: "A characteristic value ended before a field it announces.",
  E_CODEC_LENGTH: "A characteristic value has bytes left over or the wrong fixed length.",
  E_CODEC_FLAGS: "A characteristic value sets reserved flag bits or an unsupported combination.",
  E_CODEC_RESERVED: "A field holds a reserved or special value the metric cannot take.",
  E_CODEC_RANGE: "A value is outside what the field or the metric allows.",
  E_CODEC_UNKNOWN: "No codec is known for a characteristic or record type.",
  E_CODEC_MAPPING:
    "A reading and its characteristic values do not fit the device's GATT mapping: a metric, value or filter param is missing, unexpected, repeated or out of order.",
  E_STORE_CONFLICT: "A record with the same unique key already exists in the store.",
  E_STORE_NOT_FOUND: "The record an operation refers to does not exist in the store.",
  E_STORE_INVALID: "A value given to the store breaks a rule of its schema (range, enum, shape).",
  E_STORE_UNAVAILABLE: "The store's database cannot be opened or reached.",
  E_PORT_IN_USE:
    "A port the lab listens on (the HTTP API's --port, the embedded broker's embedded:PORT, the BLE controller's --listen) is taken by another process: the message names the port and how to choose another.",
  E_BROKER_UNAVAILABLE:
    "The embedded MQTT broker cannot be started, or an external one cannot be reached at its URL (a taken port is E_PORT_IN_USE).",
  E_BROKER_REFUSED:
    "The MQTT broker refused a connection, publication or subscription: credentials or ACL.",
  E_MQTT_TOPIC: "An MQTT topic is not one of the lab's topics (see the topic map).",
  E_MQTT_PAYLOAD:
    "An MQTT payload is not JSON, or does not match the versioned schema of its topic.",
  E_CELLULAR_OFFLINE:
    "A modem could not send: its cellular link is down (outage, coverage hole, no signal) or its MQTT connection closed before the PUBACK.",
  E_OUTBOX_UNAVAILABLE:
    "A store-and-forward outbox file (--outbox DIR) cannot be created, opened, read or written (a full disk).",
  E_INGEST_UNKNOWN_DEVICE:
    "An uplink reading names a sensor code or device type the catalogue does not know.",
  E_LAB_UNREACHABLE:
    "The rpmlab serve a command acts through does not answer at its base URL (--url, $RPMLAB_URL), another server answers there (not the lab admin API's JSON), or it failed (HTTP 5xx).",
  E_BLE_HOST:
    "The BLE host stack (noble or bleno) could not be loaded or started on the chosen HCI backend.",
  E_BLE_NO_ADAPTER:
    "hci:N was asked for, but the native HCI socket module is not installed or the kernel has no Bluetooth (EAFNOSUPPORT) or no such adapter (ENODEV).",
  E_BLE_TRANSPORT:
    "An HCI transport (tcp://, worker port) could not connect, or its far end closed or sent bytes that are not H4.",
  E_BLE_TIMEOUT:
    "A BLE request (connect, discovery, read, write, RACP) got no answer within its timeout, counted from when it was sent.",
  E_BLE_GATT:
    "A GATT operation failed: the peer answered with an ATT error, lacks a service or characteristic, or the link dropped mid-request.",
  E_API_UNAUTHENTICATED:
    "HTTP 401: no Authorization header, the wrong scheme, or an unknown or revoked key or token.",
  E_API_FORBIDDEN:
    "HTTP 403: a valid key used on another client domain or environment, or a module (ASR) the account has not enabled.",
  E_API_NOT_FOUND: "HTTP 404: no resource at that path, or no record with that identifier.",
  E_API_VALIDATION:
    "HTTP 400: the request body or query failed validation; the response names each field at fault.",
  E_API_BAD_REQUEST: "HTTP 400: the request cannot be read at all (e.g. a body that is not JSON).",
  E_API_METHOD_NOT_ALLOWED:
    "HTTP 405: the path exists but does not take that method (the Allow header lists those it takes).",
  E_API_UNSUPPORTED_MEDIA_TYPE: "HTTP 415: a request body that is not application/json.",
  E_API_THROTTLED: "HTTP 429: the key's rate limit is used up (Retry-After says for how long).",
  E_WEBHOOK_NOT_DELIVERED:
    "A webhook resend or test send got no 2xx answer from the endpoint (the delivery log says what it got).",
  E_CAPTURE_WRITE:
    "A btsnoop capture file could not be written (a full disk, a closed file): records after the failure are lost.",
  E_REPORT_WRITE:
    "A scenario report file (`run --report`) could not be written at the end of the run (a full disk): the text report was printed.",
  E_SHUTDOWN_INCOMPLETE:
    "`rpmlab serve` or `rpmlab demo` stopped, but a part of the lab failed to close (the message names it; exit 1; `rpmlab run` says so in its E_SCENARIO_FAILED): what it held may not all be written.",
  E_DEAD_LETTER_KEPT:
    "A dead letter's replay failed again: its message is kept as a new dead letter with the new reason.",
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface ErrorDetails {
  /** The field, path or byte offset at fault, as a user would name it. */
  field?: string;
  /** Byte offset in a binary value. */
  offset?: number;
  /** Source file, for errors about data files. */
  file?: string;
  [key: string]: unknown;
}

export class RpmlabError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "RpmlabError";
    this.code = code;
    this.details = details;
  }
}

/**
 * A listen() refused because another process holds the port. Every server the lab starts maps it
 * to E_PORT_IN_USE, so a script sees one code and one exit status whichever port it was.
 */
export function isAddressInUse(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "EADDRINUSE";
}

/**
 * A listen() on `host` refused for the address itself (not on this machine, a name that does not
 * resolve): the fault of `--host`, which the HTTP API and the embedded broker both listen on.
 */
export function hostRefused(error: unknown, host: string, port: number): RpmlabError {
  const reason = error instanceof Error ? error.message : String(error);
  return new RpmlabError(
    "E_CONFIG_INVALID",
    `--host ${host}: cannot listen on ${host}:${port} (${reason}); give an address of this machine, e.g. 127.0.0.1 or 0.0.0.0`,
    { field: "host", host },
    error,
  );
}

/** The error codes of an address to listen on that is not this machine's, or no address. */
const ADDRESS_CODES = new Set(["EADDRNOTAVAIL", "ENOTFOUND", "EAI_AGAIN", "EAI_NONAME"]);

export function isAddressRefused(error: unknown): boolean {
  return ADDRESS_CODES.has(String((error as { code?: unknown } | null)?.code));
}

export function isRpmlabError(error: unknown, code?: ErrorCode): error is RpmlabError {
  return error instanceof RpmlabError && (code === undefined || error.code === code);
}
