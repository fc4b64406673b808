import { createHash } from "node:crypto";
import type { MqttClient } from "mqtt";
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/logger.ts";
import { toIsoMicros } from "../core/time.ts";
import { deviceMacAddress } from "../fulfilment/identifiers.ts";
import type { Broker } from "../mqtt/broker.ts";
import { connectClient } from "../mqtt/client.ts";
import { ENVELOPE_VERSION, type WhitelistDown } from "../mqtt/envelope.ts";
import { encodePayload } from "../mqtt/payload.ts";
import { TOPIC_QOS, topicOf } from "../mqtt/topics.ts";
import type { Store } from "../store/store.ts";

/** Where the lab's downlink messages go: into the embedded broker, or through a client. */
export interface DownlinkChannel {
  publish(topic: string, payload: Buffer): Promise<void>;
  close(): Promise<void>;
}

/**
 * The channel for a broker: the embedded broker publishes from inside (no connection, no
 * credentials); on an external broker, an MQTT client with the lab service's credentials (they
 * travel in the broker URL, as the ingestion subscription's do), clean session: the broker
 * queues QoS 1 downlink in each gateway's persistent session, not in the sender's.
 */
export async function downlinkChannel(broker: Broker, clientId: string): Promise<DownlinkChannel> {
  if (broker.publish !== undefined) {
    const publish = broker.publish.bind(broker);
    return { publish, close: async () => undefined };
  }
  const client: MqttClient = await connectClient(broker.url, { clientId, clean: true });
  return {
    publish: async (topic, payload) => {
      await client.publishAsync(topic, payload, { qos: TOPIC_QOS, retain: false });
    },
    close: async () => {
      await client.endAsync(false).catch(() => undefined);
    },
  };
}

/**
 * The downlink client's id for an ingest process's `--ingest-id`: unique per ingest id and
 * within the 23 characters every broker takes ([MQTT-3.1.3-5]). Two ids sharing their first 20
 * characters made one client id, and the two processes took the session from each other every
 * second; a longer id keeps 13 of its characters and a digest of the whole.
 */
export function downlinkClientId(ingestId: string): string {
  if (ingestId.length <= 20) return `${ingestId}-dl`;
  const digest = createHash("sha256").update(ingestId).digest("hex").slice(0, 6);
  return `${ingestId.slice(0, 13)}-${digest}-dl`;
}

/**
 * How far a check-in's `checkin_at` may lie from its receipt before the service answers with its
 * time. A gateway leaves its clock alone when the answer falls within its check-in's round trip
 * give or take a second (src/gateway/gateway.ts), so a clock this close would not be moved by it:
 * answering every check-in sent a message, and cost the gateway a parse, to change nothing.
 */
const CLOCK_AGREES_MS = 1000;

/** A check-in as the service received it. */
export interface CheckIn {
  /** The gateway's clock when it checked in (`checkin_at`). */
  readonly at: number | null;
  /** The service's clock when the check-in arrived. */
  readonly receivedAt: number;
}

/**
 * What the lab sends a gateway on `rpm/v1/gw/{uuid}/down` (spec 2.3): the whole whitelist with
 * each entry's status (RE until the gateway reports holding it, CO after), whenever the
 * gateway's device set changes and at a check-in that did not report holding it; and the
 * service's time, answering a check-in whose clock is off by more than CLOCK_AGREES_MS, for the
 * gateway to set its clock and then its devices'.
 */
export class Downlinks {
  readonly counts = { whitelist: 0, time: 0, failed: 0 };

  constructor(
    private readonly deps: {
      readonly store: Store;
      readonly clock: Clock;
      readonly channel: DownlinkChannel;
      readonly logger?: Logger;
    },
  ) {}

  /** The whitelist as the store holds it, with the sensor ids of the devices it names. */
  async whitelistOf(gatewayUuid: string): Promise<WhitelistDown> {
    const { store } = this.deps;
    const entries = await store.whitelist.list(gatewayUuid);
    const gateway = await store.gateways.get(gatewayUuid);
    const sensorIds = new Map<string, string>();
    if (gateway?.accountId != null && entries.length > 0) {
      const { rows } = await store.devices.list(gateway.accountId, {
        hardwareUuidIexact: gatewayUuid,
      });
      for (const d of rows)
        if (d.sensorId !== null) sensorIds.set(deviceMacAddress(d.id), d.sensorId);
    }
    return {
      v: ENVELOPE_VERSION,
      type: "whitelist",
      devices: entries.map((e) => {
        const sensorId = sensorIds.get(e.macAddress);
        return {
          mac_address: e.macAddress,
          sensor_code: e.sensorCode,
          ...(sensorId === undefined ? {} : { sensor_id: sensorId }),
          whitelist_status: e.whitelistStatus,
        };
      }),
    };
  }

  /** Sends the gateway its whole whitelist. Failures are logged and counted, never thrown. */
  async sendWhitelist(gatewayUuid: string): Promise<void> {
    await this.send(gatewayUuid, "whitelist", async () =>
      encodePayload("gw/down", await this.whitelistOf(gatewayUuid)),
    );
  }

  /** Sends the gateway the service's time, answering its check-in of `checkinAt` if given. */
  async sendTime(gatewayUuid: string, checkinAt: number | null = null): Promise<void> {
    await this.send(gatewayUuid, "time", async () =>
      encodePayload("gw/down", {
        v: ENVELOPE_VERSION,
        type: "time",
        now: toIsoMicros(this.deps.clock.now()),
        ...(checkinAt === null ? {} : { checkin_at: toIsoMicros(checkinAt) }),
      }),
    );
  }

  /**
   * A check-in: the whitelist, unless the gateway reported holding exactly it (`held`: a changed
   * whitelist goes out when it changes, so the check-in's copy is for a gateway that missed
   * one), then the time when the check-in shows the gateway's clock off.
   */
  async checkedIn(gatewayUuid: string, checkin: CheckIn, held = false): Promise<void> {
    if (!held) await this.sendWhitelist(gatewayUuid);
    const { at, receivedAt } = checkin;
    if (at === null || Math.abs(receivedAt - at) > CLOCK_AGREES_MS) {
      await this.sendTime(gatewayUuid, at);
    }
  }

  private async send(
    gatewayUuid: string,
    kind: "whitelist" | "time",
    payload: () => Promise<Buffer>,
  ): Promise<void> {
    try {
      await this.deps.channel.publish(topicOf("gw/down", gatewayUuid), await payload());
      this.counts[kind]++;
    } catch (error) {
      this.counts.failed++;
      this.deps.logger?.error({ err: error, gateway: gatewayUuid, kind }, "downlink failed");
    }
  }
}
