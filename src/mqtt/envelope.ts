import { z } from "zod";

/**
 * The payloads of the lab's MQTT topics, version 1 (DESIGN.md "Uplink"). The gateway is a dumb
 * pipe: it relays the raw characteristic values a device sent, with the characteristic UUID,
 * the device's address and sensor code, when it received them and the device's record sequence;
 * direct-cellular devices publish the same envelope under their IMEI. Every payload carries
 * `v: 1`; a later version gets its own schema and topic root (`rpm/v2/…`). Objects are strict:
 * an unknown field is an error, so a gateway written elsewhere learns of a typo at once.
 *
 * src/mqtt/schema/rpmlab-mqtt-v1.schema.json is generated from these schemas (json-schema.ts).
 * Their patterns are the schema's, so they say what every regex dialect reads alike: digits as
 * [0-9], never \d (Python's re, under jsonschema, takes any Unicode digit for it), and no
 * \p{…} escapes (which it refuses).
 */
export const ENVELOPE_VERSION = 1;

/**
 * `pattern`, its final `$` the very end of the text in every regex dialect: Python's re (under
 * jsonschema) also lets `$` match before a final newline, so "2.4.1\n" passed there; `(?!\n)`
 * refuses that place and changes nothing in ECMA-262, where `$` is the end alone.
 */
function whole(pattern: RegExp): RegExp {
  return new RegExp(`${pattern.source}(?!\\n)`, pattern.flags);
}

/** Spec 2.2 / wire-formats "Gateways": 12 upper-case hex characters, no hyphens. */
export const GATEWAY_UUID_PATTERN = whole(/^[0-9A-F]{12}$/);
/** 15 decimal digits (an IMEI with its check digit). */
export const IMEI_PATTERN = whole(/^[0-9]{15}$/);
/**
 * The most devices a gateway's whitelist holds (the downlink's and the check-in's limit): the
 * service refuses to activate a device past it (src/fulfilment/whitelist-room.ts), since a longer
 * whitelist could never be sent.
 */
export const WHITELIST_MAX = 64;

/** Spec 2.3 whitelist mac_address: 12 characters, no separators; upper-case hex here. */
export const MAC_PATTERN = whole(/^[0-9A-F]{12}$/);
/** A sender-chosen id, unique per gateway or IMEI, kept across re-sends of the same message. */
export const MESSAGE_ID_PATTERN = whole(/^[A-Za-z0-9._:-]{1,64}$/);
/** 16-bit ("2A35"), or 128-bit with or without dashes; any case (src/gatt/uuids.ts canonicalises). */
const UUID_PATTERN = whole(
  /^(?:[0-9A-Fa-f]{4}|[0-9A-Fa-f]{32}|[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12})$/,
);
/** Spec 2.8 sensor code, a decimal string such as "10". */
const SENSOR_CODE_PATTERN = whole(/^[0-9]{1,3}$/);
/** Spec 2.4 sensor id (the inhaler's serial number). */
const SENSOR_ID_PATTERN = whole(/^[A-Za-z0-9]{1,32}$/);
/** ISO 8601 in UTC with a Z, up to microseconds (how the service writes times, spec intro). */
const UTC_PATTERN = whole(
  /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?Z$/,
);
/**
 * The calendar as a pattern, so the published JSON Schema refuses what parseIso refuses by its
 * patterns alone (JSON Schema 2020-12 §7.2: `format` is an annotation unless a validator opts
 * in, and ajv-formats' date-time takes 23:59:60). Proleptic Gregorian, years 0000–9999: days of
 * each month, 29 February in years divisible by 4 but not 100, or by 400 (0000 included);
 * hours 00–23, minutes and seconds 00–59 (no leap second: the service's clock has none).
 */
const LEAP_YEAR = "(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)";
const CALENDAR_PATTERN = new RegExp(
  "^(?:[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)" +
    `|02-(?:0[1-9]|1[0-9]|2[0-8]))|${LEAP_YEAR}-02-29)T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]`,
);

/** Readings one envelope may batch (a gateway's store-and-forward outbox drains in batches). */
export const MAX_READINGS = 256;
/** Characteristic values of one reading. */
export const MAX_VALUES = 16;
/** ATT (Core Vol 3 Part F §3.2.9): an attribute value is at most 512 bytes. */
export const MAX_VALUE_BYTES = 512;

/**
 * At most 512 bytes of base64, as a pattern the JSON Schema carries: 170 groups of four
 * characters (510 bytes) and a padded last group of one or two bytes. A length bound alone
 * cannot say it: 513 bytes are 684 characters, as many as 512 bytes with their padding.
 */
const AT_MOST_512_BYTES_B64 = whole(
  /^(?:[A-Za-z0-9+/]{4}){0,170}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/,
);

/**
 * Text a device reports about itself (firmware and bootloader versions, a device type name):
 * no control characters (C0, DEL, C1) and no unpaired surrogate. JSON carries both as \u
 * escapes, but PostgreSQL text refuses U+0000 (the check-in failed as a store error that named
 * no field) and neither store keeps a lone surrogate (SQLite and PostgreSQL each write U+FFFD in
 * its place, differently): refused here by name, never stored changed. Cc is U+0000–U+001F and
 * U+007F–U+009F; with the `u` flag U+D800–U+DFFF matches a lone surrogate only, not the halves
 * of a pair (and in Python, whose strings hold code points). Ranges, not \p{Cc}\p{Cs}: the JSON
 * Schema carries this pattern, and Python's re (jsonschema's) refuses property escapes.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters it refuses.
const REPORTED_TEXT = whole(/^[^\u0000-\u001F\u007F-\u009F\uD800-\uDFFF]*$/u);

function reportedText(max: number) {
  return z
    .string()
    .min(1)
    .max(max)
    .regex(REPORTED_TEXT, "must be printable text: no control characters or unpaired surrogates");
}

const instant = z
  .string()
  .regex(UTC_PATTERN, "must be ISO 8601 UTC, e.g. 2026-01-01T08:00:00Z")
  .regex(CALENDAR_PATTERN, "is not a calendar date and time")
  .meta({ format: "date-time" });

const version = z.literal(ENVELOPE_VERSION).describe("Payload format version.");

export const characteristicValueSchema = z
  .strictObject({
    uuid: z
      .string()
      .regex(UUID_PATTERN, "must be a 16-bit or 128-bit UUID")
      .describe("Characteristic the value was read or notified from, e.g. 2A35."),
    value_b64: z
      .base64()
      .regex(
        AT_MOST_512_BYTES_B64,
        `must decode to at most ${MAX_VALUE_BYTES} bytes (an ATT attribute value)`,
      )
      .describe(
        "The characteristic value exactly as the device sent it (at most 512 bytes, ATT), base64.",
      ),
  })
  .meta({ id: "CharacteristicValue" });

const readingFields = {
  received_at: instant.describe("When the gateway (or modem) received the values."),
  sequence: z
    .int()
    .min(0)
    .max(0xffff)
    .describe("The device's record sequence number (uint16) of the reading."),
  values: z
    .array(characteristicValueSchema)
    .min(1)
    .max(MAX_VALUES)
    .describe("The characteristic values of one physical reading, in the order received."),
};

export const gatewayReadingSchema = z
  .strictObject({
    device_address: z
      .string()
      .regex(MAC_PATTERN, "must be 12 upper-case hex characters")
      .describe("Bluetooth address of the device, 12 upper-case hex characters."),
    sensor_code: z
      .string()
      .regex(SENSOR_CODE_PATTERN, 'must be a decimal string such as "10"')
      .describe("Sensor code of the device type (spec 2.8), as whitelisted on the gateway."),
    sensor_id: z
      .string()
      .regex(SENSOR_ID_PATTERN, "must be 1 to 32 letters and digits")
      .optional()
      .describe("Sensor id of types with several devices per gateway (inhaler serial number)."),
    clock_unset: z
      .literal(true)
      .optional()
      .describe(
        "The device's clock was not set when it took this reading (the gateway found it off from its own time and had not yet written Current Time): its timestamp is a guess, and the service stores the reading at received_at with estimated_timestamp true.",
      ),
    ...readingFields,
  })
  .meta({ id: "GatewayReading" });

export const cellularReadingSchema = z.strictObject(readingFields).meta({ id: "CellularReading" });

const messageId = z
  .string()
  .regex(MESSAGE_ID_PATTERN, "must be 1 to 64 of A-Z a-z 0-9 . _ : -")
  .describe("Stable id of this message, unique per gateway or IMEI; a re-send repeats it.");
const sentAt = instant.describe("When the message left the gateway or device.");

export const gatewayUplinkSchema = z
  .strictObject({
    v: version,
    message_id: messageId,
    gateway_uuid: z
      .string()
      .regex(GATEWAY_UUID_PATTERN, "must be 12 upper-case hex characters")
      .describe("The publishing gateway; equals the {gateway_uuid} level of the topic."),
    sent_at: sentAt,
    readings: z.array(gatewayReadingSchema).min(1).max(MAX_READINGS),
  })
  .meta({ id: "GatewayUplink", title: "rpm/v1/gw/{gateway_uuid}/up" });

export const cellularUplinkSchema = z
  .strictObject({
    v: version,
    message_id: messageId,
    imei: z
      .string()
      .regex(IMEI_PATTERN, "must be 15 digits")
      .describe("The publishing device; equals the {imei} level of the topic."),
    device_type: reportedText(100).describe(
      "Device type name as hwi-device-types lists it, e.g. Vendor Cellular BPM.",
    ),
    sent_at: sentAt,
    readings: z.array(cellularReadingSchema).min(1).max(MAX_READINGS),
  })
  .meta({ id: "CellularUplink", title: "rpm/v1/cell/{imei}/up" });

/** A device the gateway holds on its whitelist (the downlink's entries, without their status). */
export const heldDeviceSchema = z
  .strictObject({
    mac_address: z.string().regex(MAC_PATTERN, "must be 12 upper-case hex characters"),
    sensor_code: z.string().regex(SENSOR_CODE_PATTERN, 'must be a decimal string such as "10"'),
    sensor_id: z.string().regex(SENSOR_ID_PATTERN, "must be 1 to 32 letters and digits").optional(),
  })
  .meta({ id: "HeldDevice" });

/** Spec 2.2 / 2.3: what a gateway reports about itself at each check-in. Retained. */
export const gatewayOnlineSchema = z
  .strictObject({
    v: version,
    online: z.literal(true),
    signal_strength: z.int().min(0).max(30).describe("Spec 2.2: 0 to 30."),
    firmware_version: reportedText(64),
    bootloader_version: reportedText(64),
    provisioned: z.boolean().describe("Spec 2.3: false while provisioning is not complete."),
    checkin_at: instant.describe(
      "The gateway's clock at this connection. The service keeps its own receipt time as last_checkin_time, and answers with a time downlink when the two differ by more than a second.",
    ),
    whitelist: z
      .array(heldDeviceSchema)
      .max(WHITELIST_MAX)
      .optional()
      .describe(
        "The whitelist the gateway holds and enforces now (its acknowledgement of the downlink): the service confirms these entries (RE to CO, spec 2.3) and sets back to RE any it does not list. Absent: no change.",
      ),
  })
  .meta({ id: "GatewayOnline" });

/** The gateway's last will, published by the broker when its connection dies. */
export const gatewayOfflineSchema = z
  .strictObject({ v: version, online: z.literal(false) })
  .meta({ id: "GatewayOffline" });

export const gatewayStatusSchema = z
  .discriminatedUnion("online", [gatewayOnlineSchema, gatewayOfflineSchema])
  .meta({ id: "GatewayStatus", title: "rpm/v1/gw/{gateway_uuid}/status" });

export const whitelistDownSchema = z
  .strictObject({
    v: version,
    type: z.literal("whitelist"),
    devices: z
      .array(
        z.strictObject({
          mac_address: z.string().regex(MAC_PATTERN, "must be 12 upper-case hex characters"),
          sensor_code: z.string().regex(SENSOR_CODE_PATTERN),
          sensor_id: z.string().regex(SENSOR_ID_PATTERN).optional(),
          whitelist_status: z.enum(["RE", "CO"]).describe("Spec 2.3: Requested or Confirmed."),
        }),
      )
      .max(WHITELIST_MAX)
      .describe("The whole whitelist: devices not listed are dropped."),
  })
  .meta({ id: "WhitelistDown" });

/** Sent answering a check-in whose checkin_at is over a second off the service's clock. */
export const timeDownSchema = z
  .strictObject({
    v: version,
    type: z.literal("time"),
    now: instant.describe("The service's time, for the gateway to set device clocks."),
    checkin_at: instant
      .optional()
      .describe(
        "The checkin_at of the status this answers: the gateway knows the service read its time between then and the arrival, and leaves a clock that agrees alone (an answer queued in its persistent session while it was away arrives late).",
      ),
  })
  .meta({ id: "TimeDown" });

export const downlinkSchema = z
  .discriminatedUnion("type", [whitelistDownSchema, timeDownSchema])
  .meta({ id: "Downlink", title: "rpm/v1/gw/{gateway_uuid}/down" });

export type CharacteristicValuePayload = z.infer<typeof characteristicValueSchema>;
export type GatewayReadingPayload = z.infer<typeof gatewayReadingSchema>;
export type CellularReadingPayload = z.infer<typeof cellularReadingSchema>;
export type GatewayUplink = z.infer<typeof gatewayUplinkSchema>;
export type CellularUplink = z.infer<typeof cellularUplinkSchema>;
export type GatewayStatusPayload = z.infer<typeof gatewayStatusSchema>;
export type DownlinkPayload = z.infer<typeof downlinkSchema>;
export type WhitelistDown = z.infer<typeof whitelistDownSchema>;
export type HeldDevicePayload = z.infer<typeof heldDeviceSchema>;
export type GatewayOnlinePayload = z.infer<typeof gatewayOnlineSchema>;
