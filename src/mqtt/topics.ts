import type { z } from "zod";
import { RpmlabError } from "../core/errors.ts";
import {
  type CellularUplink,
  cellularUplinkSchema,
  type DownlinkPayload,
  downlinkSchema,
  GATEWAY_UUID_PATTERN,
  type GatewayStatusPayload,
  type GatewayUplink,
  gatewayStatusSchema,
  gatewayUplinkSchema,
  IMEI_PATTERN,
} from "./envelope.ts";

/**
 * The one map of the lab's MQTT topics to their payload types (STYLE habit 8; in the manner of
 * zigbee2mqtt's lib/types/api.ts): topics per gateway or IMEI, never per field. Everything that
 * builds, parses, authorises or documents a topic reads this map.
 */
export interface TopicPayloads {
  /** Readings a gateway relays. */
  "gw/up": GatewayUplink;
  /** A gateway's status, retained; its last will says offline. */
  "gw/status": GatewayStatusPayload;
  /** Whitelist and time, from the lab to one gateway. */
  "gw/down": DownlinkPayload;
  /** Readings of a direct-cellular device. */
  "cell/up": CellularUplink;
}

export type TopicKind = keyof TopicPayloads;

/** Who sends on a topic: the device side (gateway, cellular device) or the lab. */
export type TopicSender = "gateway" | "cellular" | "lab";

export interface TopicSpec<K extends TopicKind> {
  readonly kind: K;
  /** As documented, e.g. rpm/v1/gw/{gateway_uuid}/up. */
  readonly pattern: string;
  /** The identity level: a gateway uuid or an IMEI. */
  readonly id: "gateway_uuid" | "imei";
  readonly sender: TopicSender;
  /** [MQTT-3.3.1-5] the broker keeps the last retained message of the topic for new subscribers. */
  readonly retain: boolean;
  readonly schema: z.ZodType<TopicPayloads[K]>;
  readonly description: string;
}

export const TOPIC_ROOT = "rpm/v1";
/** Every uplink and status topic is sent with QoS 1 (at least once), on persistent sessions. */
export const TOPIC_QOS = 1;

export const TOPICS: { readonly [K in TopicKind]: TopicSpec<K> } = {
  "gw/up": {
    kind: "gw/up",
    pattern: `${TOPIC_ROOT}/gw/{gateway_uuid}/up`,
    id: "gateway_uuid",
    sender: "gateway",
    retain: false,
    schema: gatewayUplinkSchema,
    description: "readings the gateway relays: raw characteristic values with their metadata",
  },
  "gw/status": {
    kind: "gw/status",
    pattern: `${TOPIC_ROOT}/gw/{gateway_uuid}/status`,
    id: "gateway_uuid",
    sender: "gateway",
    retain: true,
    schema: gatewayStatusSchema,
    description:
      "signal strength, firmware and bootloader versions, provisioned, check-in time; the last will says offline",
  },
  "gw/down": {
    kind: "gw/down",
    pattern: `${TOPIC_ROOT}/gw/{gateway_uuid}/down`,
    id: "gateway_uuid",
    sender: "lab",
    retain: false,
    schema: downlinkSchema,
    description: "the whitelist (whole list) and the service's time, for the gateway",
  },
  "cell/up": {
    kind: "cell/up",
    pattern: `${TOPIC_ROOT}/cell/{imei}/up`,
    id: "imei",
    sender: "cellular",
    retain: false,
    schema: cellularUplinkSchema,
    description: "readings of a direct-cellular device, in the same envelope",
  },
};

export const TOPIC_KINDS = Object.keys(TOPICS) as TopicKind[];

export type ParsedTopic =
  | { readonly kind: "gw/up" | "gw/status" | "gw/down"; readonly gatewayUuid: string }
  | { readonly kind: "cell/up"; readonly imei: string };

/** The id a parsed topic names: gateway uuid or IMEI. */
export function topicId(parsed: ParsedTopic): string {
  return parsed.kind === "cell/up" ? parsed.imei : parsed.gatewayUuid;
}

function topicError(topic: string, why: string): RpmlabError {
  return new RpmlabError("E_MQTT_TOPIC", `topic "${topic}": ${why}`, { field: "topic", topic });
}

function checkId(kind: TopicKind, id: string, topic: string): void {
  const pattern = TOPICS[kind].id === "imei" ? IMEI_PATTERN : GATEWAY_UUID_PATTERN;
  if (!pattern.test(id)) {
    const what =
      TOPICS[kind].id === "imei" ? "an IMEI of 15 digits" : "12 upper-case hex characters";
    throw topicError(topic, `level 4 "${id}" must be ${what}`);
  }
}

/** The topic of a kind for a gateway uuid or IMEI; E_MQTT_TOPIC when the id is malformed. */
export function topicOf(kind: TopicKind, id: string): string {
  const topic = TOPICS[kind].pattern.replace(/\{[a-z_]+\}/, id);
  checkId(kind, id, topic);
  return topic;
}

/** Parses a topic of the map, or throws E_MQTT_TOPIC naming the level at fault. */
export function parseTopic(topic: string): ParsedTopic {
  const levels = topic.split("/");
  if (levels.length !== 5 || `${levels[0]}/${levels[1]}` !== TOPIC_ROOT) {
    throw topicError(topic, `expected ${TOPIC_KINDS.map((k) => TOPICS[k].pattern).join(", ")}`);
  }
  const [, , family, id, leaf] = levels as [string, string, string, string, string];
  const kind = `${family}/${leaf}`;
  if (!(kind in TOPICS)) {
    throw topicError(topic, `no topic ${TOPIC_ROOT}/${family}/{id}/${leaf} in the topic map`);
  }
  checkId(kind as TopicKind, id, topic);
  return kind === "cell/up"
    ? { kind, imei: id }
    : { kind: kind as "gw/up" | "gw/status" | "gw/down", gatewayUuid: id };
}

/** The subscription filter of a kind across all gateways or IMEIs, e.g. rpm/v1/gw/+/up. */
export function filterOf(kind: TopicKind): string {
  return TOPICS[kind].pattern.replace(/\{[a-z_]+\}/, "+");
}

/** Topics the ingestion core consumes: everything the device side sends. */
export const INGEST_KINDS: readonly TopicKind[] = TOPIC_KINDS.filter(
  (k) => TOPICS[k].sender !== "lab",
);

/**
 * The filters the ingestion core subscribes to. With a group, as shared subscriptions
 * ([MQTT-4.8.2] `$share/{group}/{filter}`): each message goes to one member of the group, so
 * several ingest processes split the load.
 */
export function ingestFilters(sharedGroup: string | null): string[] {
  return INGEST_KINDS.map((k) =>
    sharedGroup === null ? filterOf(k) : `$share/${sharedGroup}/${filterOf(k)}`,
  );
}

const INGEST_FAMILIES = new Set(INGEST_KINDS as readonly string[]);

/** Whether a topic matches one of the ingestion filters (`rpm/v1/gw/+/up` and the others). */
export function isIngestTopic(topic: string): boolean {
  const levels = topic.split("/");
  return (
    levels.length === 5 &&
    `${levels[0]}/${levels[1]}` === TOPIC_ROOT &&
    levels[3] !== "" &&
    INGEST_FAMILIES.has(`${levels[2]}/${levels[4]}`)
  );
}
