import type { MqttRole } from "../store/types-hardware.ts";
import { parseTopic, TOPIC_KINDS, TOPIC_ROOT, TOPICS, topicOf } from "./topics.ts";

/**
 * Who may publish and subscribe where (issue 4), derived from the topic map: a gateway publishes
 * only under its own uuid (`up`, `status`) and subscribes only to its own `down`; a direct-
 * cellular device publishes only its own `cell/{imei}/up`; a lab service (the ingestion core,
 * the downlink sender) reads every device topic and writes every `down`. The username of a
 * device is its gateway uuid or IMEI, so the same rules read as Mosquitto ACL patterns over %u
 * (README "MQTT").
 */
export interface MqttIdentity {
  readonly username: string;
  readonly role: MqttRole;
}

interface DeviceTopics {
  readonly publish: readonly string[];
  readonly subscribe: readonly string[];
}

/** Per identity (one per connection): its every publish is checked, a check-in every 15 min. */
const topicsOf = new WeakMap<MqttIdentity, DeviceTopics>();

/** Topics a device identity publishes to, and the filters it may subscribe to. */
function deviceTopics(identity: MqttIdentity): DeviceTopics {
  const known = topicsOf.get(identity);
  if (known !== undefined) return known;
  const topics = ownTopics(identity);
  topicsOf.set(identity, topics);
  return topics;
}

function ownTopics(identity: MqttIdentity): DeviceTopics {
  const sender = identity.role === "gateway" ? "gateway" : "cellular";
  const idKind = identity.role === "gateway" ? "gateway_uuid" : "imei";
  const publish: string[] = [];
  const subscribe: string[] = [];
  for (const kind of TOPIC_KINDS) {
    const spec = TOPICS[kind];
    if (spec.id !== idKind) continue;
    if (spec.sender === sender) publish.push(topicOf(kind, identity.username));
    else if (spec.sender === "lab") subscribe.push(topicOf(kind, identity.username));
  }
  return { publish, subscribe };
}

/** Why `identity` may not publish to `topic`, or null when it may. */
export function publishDenied(identity: MqttIdentity, topic: string): string | null {
  if (identity.role === "service") {
    try {
      if (TOPICS[parseTopic(topic).kind].sender === "lab") return null;
    } catch {
      // not a topic of the map: denied below
    }
    return `service ${identity.username} publishes only to the lab's downlink topics`;
  }
  try {
    if (deviceTopics(identity).publish.includes(topic)) return null;
  } catch {
    // a malformed username owns no topic
  }
  return `${identity.role} ${identity.username} may not publish to ${topic}`;
}

/** [MQTT-4.8.2] `$share/{group}/{filter}`: the filter inside a shared subscription. */
function unshared(filter: string): string {
  const m = /^\$share\/[^/#+]+\/(.+)$/.exec(filter);
  return m === null ? filter : m[1]!;
}

/** Why `identity` may not subscribe to `filter`, or null when it may. */
export function subscribeDenied(identity: MqttIdentity, filter: string): string | null {
  if (identity.role === "service") {
    const inner = unshared(filter);
    return inner === TOPIC_ROOT || inner.startsWith(`${TOPIC_ROOT}/`)
      ? null
      : `service ${identity.username} subscribes only under ${TOPIC_ROOT}/`;
  }
  try {
    if (deviceTopics(identity).subscribe.includes(filter)) return null;
  } catch {
    // a malformed username owns no topic
  }
  return `${identity.role} ${identity.username} may not subscribe to ${filter}`;
}

/**
 * A device's client id starts with its username, so no device can take over another's
 * persistent session ([MQTT-3.1.4-2]: a second connection with the same id ends the first).
 */
export function clientIdDenied(identity: MqttIdentity, clientId: string): string | null {
  if (identity.role === "service") return null;
  return clientId === identity.username || clientId.startsWith(`${identity.username}-`)
    ? null
    : `the client id of ${identity.username} must be "${identity.username}" or start with "${identity.username}-"`;
}
