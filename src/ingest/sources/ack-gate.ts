import type { MqttClient } from "mqtt";

type SendPacket = (packet: { cmd: string; messageId?: number }, cb?: () => void) => void;

/** A held acknowledgement: released once its batch committed, on the connection it came on. */
export interface AckTicket {
  readonly messageId: number;
  readonly connection: number;
}

/**
 * Holds the PUBACK of each QoS 1 message until the store committed it ([MQTT-4.3.2-2] the
 * receiver acknowledges once it has taken ownership: a crash before the commit leaves the
 * message unacknowledged, and the broker redelivers it to the persistent session).
 *
 * MQTT.js sends a PUBACK when `handleMessage` calls back, and parses the next packet only after
 * that, so holding the callback until the commit would put one message in each transaction.
 * Instead `handleMessage` calls back at once and this gate keeps the PUBACK it triggers (MQTT.js
 * sends it through the client's internal `_sendPacket`, wrapped here; mqtt is pinned, and
 * test/ingest checks the behaviour). Released PUBACKs go out in the order the messages came
 * ([MQTT-4.6.0-2]). PUBACKs held when the connection drops are forgotten: packet ids belong to
 * their connection, and the broker resends those messages on the next one ([MQTT-4.4.0-1]).
 */
export class AckGate {
  private connection = 0;
  private readonly held = new Set<number>();
  private readonly parked = new Map<number, { cmd: string; messageId?: number }>();
  private readonly send: SendPacket;

  constructor(client: MqttClient) {
    const internal = client as unknown as { _sendPacket: SendPacket };
    const send = internal._sendPacket.bind(client);
    this.send = send;
    internal._sendPacket = (packet, cb, ...rest: unknown[]) => {
      const id = packet.messageId;
      if (packet.cmd === "puback" && id !== undefined && this.held.has(id)) {
        this.parked.set(id, packet);
        cb?.(); // lets MQTT.js parse the next packet now
        return;
      }
      (send as (...args: unknown[]) => void)(packet, cb, ...rest);
    };
    client.on("close", () => {
      this.connection++;
      this.held.clear();
      this.parked.clear();
    });
  }

  /** Call before `handleMessage` calls back, so the PUBACK it triggers is kept. */
  hold(messageId: number): AckTicket {
    this.held.add(messageId);
    return { messageId, connection: this.connection };
  }

  /** Sends the held PUBACK, unless its connection is gone. */
  release(ticket: AckTicket): void {
    if (ticket.connection !== this.connection) return;
    this.held.delete(ticket.messageId);
    const packet = this.parked.get(ticket.messageId);
    if (packet === undefined) return;
    this.parked.delete(ticket.messageId);
    this.send(packet);
  }

  /** PUBACKs waiting for their commit. */
  get waiting(): number {
    return this.parked.size;
  }
}
