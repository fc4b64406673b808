import type { Client } from "aedes";
import type { AedesPacket } from "aedes-packet";
import aedesPersistence from "aedes-persistence";

// Its types declare an ES default export; at run time the CommonJS module is the function itself.
const memoryPersistence = aedesPersistence as unknown as typeof aedesPersistence.default;

/**
 * aedes' in-memory persistence, with DUP set on re-deliveries. A QoS 1 packet queued for a
 * persistent session that already has a packet identifier was sent before and never
 * acknowledged; when the session resumes, MQTT 3.1.1 §3.3.1.1 [MQTT-3.3.1-1] has it sent again
 * with DUP 1, as Mosquitto does. aedes 1.2 resends it as first sent, DUP 0. A packet queued while
 * the client was away has no identifier yet and goes out with DUP 0, a first delivery.
 */
export function redeliveryPersistence(): ReturnType<typeof memoryPersistence> {
  const persistence = memoryPersistence();
  const queued = persistence.outgoingStream.bind(persistence);
  persistence.outgoingStream = (client: Client) =>
    queued(client).map((packet: AedesPacket) =>
      packet.messageId === undefined ? packet : { ...packet, dup: true },
    );
  return persistence;
}
