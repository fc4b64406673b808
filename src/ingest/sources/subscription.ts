import type { IPublishPacket, MqttClient } from "mqtt";
import type { Logger } from "../../core/logger.ts";
import { connectClient, subscribeAll } from "../../mqtt/client.ts";
import { ingestFilters, parseTopic } from "../../mqtt/topics.ts";
import type { IngestSink, IngestSource } from "../source.ts";
import { AckGate } from "./ack-gate.ts";

export interface SubscriptionOptions {
  /** Broker URL (Broker.url). */
  readonly url: string;
  /**
   * Stable per ingest instance (a persistent session is found by it), and unique: two clients
   * with one id take the session from each other in a loop (STYLE "Pitfalls").
   */
  readonly clientId: string;
  readonly username?: string;
  readonly password?: string;
  /** Shared subscription group, e.g. "rpmlab-ingest"; null subscribes plainly (aedes 1.x). */
  readonly sharedGroup: string | null;
  readonly logger?: Logger;
}

/**
 * Ingestion from any broker: one MQTT.js client on a persistent session (clean: false, QoS 1),
 * subscribed to every uplink and status topic, through a shared subscription when the broker
 * has them, so several ingest processes split the load ([MQTT-4.8.2]). A message's PUBACK waits
 * for the commit of its batch (AckGate): a crash before it leaves the message with the broker,
 * which delivers it again to the session.
 */
export class MqttSubscription implements IngestSource {
  readonly describe: string;
  private client: MqttClient | undefined;
  private gate: AckGate | undefined;

  constructor(private readonly options: SubscriptionOptions) {
    this.describe = `subscription ${options.clientId} on ${options.url}`;
  }

  async start(sink: IngestSink): Promise<void> {
    const o = this.options;
    const client = await connectClient(o.url, {
      clientId: o.clientId,
      ...(o.username === undefined ? {} : { username: o.username }),
      ...(o.password === undefined ? {} : { password: o.password }),
      handleMessage: (packet, done) => this.receive(sink, packet, done),
      prepare: (c) => {
        this.gate = new AckGate(c);
        c.on("close", () => o.logger?.info("ingest subscription closed"));
        let connected = false;
        c.on("connect", (connack) => {
          if (connected) reconnected(o, connack.sessionPresent);
          connected = true;
        });
      },
      onError: (error) => o.logger?.warn({ err: error.message }, "mqtt connection error"),
    });
    this.client = client;
    try {
      await subscribeAll(client, ingestFilters(o.sharedGroup));
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    // PUBACKs still held are forgotten with the connection; the broker redelivers those.
    await client?.endAsync();
  }

  /**
   * MQTT.js parses the next packet once `done` is called; the PUBACK it triggers is held by
   * the gate until the commit. Holding `done` itself (backpressure) stops reading.
   */
  private receive(sink: IngestSink, packet: IPublishPacket, done: () => void): void {
    const ticket =
      packet.qos > 0 && packet.messageId !== undefined ? this.gate!.hold(packet.messageId) : null;
    if (packet.retain && isStatus(packet.topic)) {
      // [MQTT-3.3.1-8]: RETAIN 1 marks a message sent because this client subscribed (a
      // restart of the service): a gateway's status as it stood when last published, not a
      // check-in now (spec 2.3 last_checkin_time). Live statuses come with RETAIN 0.
      if (ticket !== null) this.gate?.release(ticket);
      done();
      return;
    }
    const payload = packet.payload;
    sink.deliver(
      {
        topic: packet.topic,
        payload: typeof payload === "string" ? Buffer.from(payload, "utf8") : payload,
      },
      (committed) => {
        if (committed && ticket !== null) this.gate?.release(ticket);
      },
      () => done(),
    );
  }
}

/**
 * After a reconnection the broker says whether it kept the persistent session ([MQTT-3.2.2-2]).
 * Without it (a broker restarted without persistence, or one that expired the session), what
 * gateways published meanwhile was queued for no one: the gateways still hold what was not
 * acknowledged to them, but anything the broker had accepted is gone. MQTT.js subscribes again.
 */
function reconnected(o: SubscriptionOptions, sessionPresent: boolean): void {
  if (sessionPresent) {
    o.logger?.info({ client_id: o.clientId }, "ingest subscription reconnected to its session");
  } else {
    o.logger?.warn(
      { client_id: o.clientId },
      "ingest subscription reconnected on a new session: messages the broker accepted while it was away were not kept for it",
    );
  }
}

function isStatus(topic: string): boolean {
  try {
    return parseTopic(topic).kind === "gw/status";
  } catch {
    return false;
  }
}
