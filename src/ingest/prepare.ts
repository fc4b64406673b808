import { isRpmlabError } from "../core/errors.ts";
import type { GatewayStatusPayload } from "../mqtt/envelope.ts";
import { MESSAGE_ID_PATTERN } from "../mqtt/envelope.ts";
import {
  MAX_PAYLOAD_BYTES,
  parsePayload,
  parseUplinkPayload,
  type RefusedReading,
} from "../mqtt/payload.ts";
import { parseTopic, TOPICS, topicId } from "../mqtt/topics.ts";
import { toUplink, type Uplink } from "../mqtt/uplink.ts";

/** One message as received: topic, payload bytes, and the Clock time of receipt. */
export interface Inbound {
  readonly topic: string;
  readonly payload: Uint8Array;
  readonly receivedAt: number;
  /** A dead letter run through ingestion again (README "Dead letters"): it ends with this. */
  readonly replays?: ReplayOf;
}

/** The dead letter a replayed message was kept as. */
export interface ReplayOf {
  readonly deadLetterId: number;
  /** DeadLetterRow.holdsClaim: the message-id claim is the dead letter's own. */
  readonly holdsClaim: boolean;
}

/** A message after the checks that need no store: topic, JSON, schema, identity. */
export type Prepared =
  | {
      readonly kind: "uplink";
      readonly inbound: Inbound;
      /** The readings that passed the schema (all, usually). */
      readonly uplink: Uplink;
      /** Index in the payload's `readings` of each reading of `uplink`. */
      readonly positions: readonly number[];
      /** The readings the schema refused on their own, kept as the message's dead letter. */
      readonly refused: readonly RefusedReading[];
    }
  | {
      readonly kind: "status";
      readonly inbound: Inbound;
      readonly gatewayUuid: string;
      readonly status: GatewayStatusPayload;
    }
  | { readonly kind: "ignored"; readonly inbound: Inbound; readonly reason: string }
  | {
      readonly kind: "dead";
      readonly inbound: Inbound;
      readonly reason: string;
      readonly messageId: string | null;
      /**
       * `sender/message id` when both are known (the topic's gateway uuid or IMEI, which the
       * broker's ACL ties to the connection): a redelivery of the same message is then taken as
       * such, not kept as a second dead letter.
       */
      readonly claimKey: string | null;
    };

/** `CODE: message` for the lab's errors; anything else is a bug, named as such. */
export function reasonOf(error: unknown): string {
  if (isRpmlabError(error)) return `${error.code}: ${error.message}`;
  return `internal error: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
}

/**
 * What a dead letter keeps of a message: its payload and the reason, or of a payload over
 * MAX_PAYLOAD_BYTES (refused for its size) the first MAX_PAYLOAD_BYTES, the reason saying so.
 * The embedded broker closes the connection of a packet that large; an external broker passes
 * up to 256 MiB ([MQTT-2.2.3], Mosquitto's default), and a gateway sending such payloads would
 * have filled the dead-letter store with them.
 */
export function deadLetterOf(
  inbound: Inbound,
  reason: string,
): { readonly payload: Uint8Array; readonly reason: string } {
  if (inbound.payload.byteLength <= MAX_PAYLOAD_BYTES) return { payload: inbound.payload, reason };
  return {
    payload: inbound.payload.subarray(0, MAX_PAYLOAD_BYTES),
    reason: `${reason}; the dead letter keeps its first ${MAX_PAYLOAD_BYTES}`,
  };
}

/**
 * The message id of a payload that failed its schema (or that the store refused), when it
 * still names one.
 */
export function salvageMessageId(payload: Uint8Array): string | null {
  try {
    const id = (JSON.parse(Buffer.from(payload).toString("utf8")) as { message_id?: unknown })
      ?.message_id;
    return typeof id === "string" && MESSAGE_ID_PATTERN.test(id) ? id : null;
  } catch {
    return null;
  }
}

/**
 * Parses topic and payload (src/mqtt): anything that does not parse becomes a dead letter with
 * the reason, never an exception.
 */
export function prepare(inbound: Inbound): Prepared {
  const dead = (reason: string, messageId: string | null = null, sender?: string): Prepared => ({
    kind: "dead",
    inbound,
    reason,
    messageId,
    claimKey: messageId === null || sender === undefined ? null : `${sender}/${messageId}`,
  });
  let topic: ReturnType<typeof parseTopic>;
  try {
    topic = parseTopic(inbound.topic);
  } catch (error) {
    return dead(reasonOf(error), salvageMessageId(inbound.payload));
  }
  if (topic.kind === "gw/down") {
    return dead(`E_MQTT_TOPIC: ${TOPICS[topic.kind].pattern} is sent by the lab, not ingested`);
  }
  if (topic.kind === "gw/status") {
    // [MQTT-3.3.1-10] a zero-length retained message removes the topic's retained status.
    if (inbound.payload.byteLength === 0) {
      return { kind: "ignored", inbound, reason: "retained status cleared" };
    }
    try {
      const status = parsePayload("gw/status", inbound.payload);
      return { kind: "status", inbound, gatewayUuid: topic.gatewayUuid, status };
    } catch (error) {
      return dead(reasonOf(error));
    }
  }
  let uplink: Uplink;
  let checked: Omit<ReturnType<typeof parseUplinkPayload>, "payload">;
  try {
    const parsed = parseUplinkPayload(topic.kind, inbound.payload);
    uplink = toUplink(parsed.payload);
    checked = parsed;
  } catch (error) {
    return dead(reasonOf(error), salvageMessageId(inbound.payload), topicId(topic));
  }
  const sender = uplink.source.kind === "gateway" ? uplink.source.gatewayUuid : uplink.source.imei;
  if (sender !== topicId(topic)) {
    const field = uplink.source.kind === "gateway" ? "gateway_uuid" : "imei";
    return dead(
      `E_MQTT_PAYLOAD: ${field} ${sender} differs from the topic's ${topicId(topic)}`,
      uplink.messageId,
      topicId(topic),
    );
  }
  return {
    kind: "uplink",
    inbound,
    uplink,
    positions: checked.positions,
    refused: checked.refused,
  };
}
