import type { ModemOptions } from "../cellular/modem.ts";
import { storedReadingFault, storedValues } from "../cellular/stored-reading.ts";
import { ENVELOPE_VERSION } from "../mqtt/envelope.ts";
import { topicOf } from "../mqtt/topics.ts";
import { gatewayUplink } from "../mqtt/uplink.ts";
import type { GatewayOptions, QueuedReading } from "./gateway.ts";

/** A hub holds a few days of a household's readings; past that the oldest go, counted. */
export const DEFAULT_GATEWAY_OUTBOX = 10_000;

/**
 * The gateway's modem (src/cellular): client id = its uuid, last will `{"online": false}` on
 * its retained status, its downlink subscribed on every connection, its outbox named by its
 * uuid, and batches of readings wrapped in the `gw/up` envelope.
 */
export function gatewayModemOptions(
  options: GatewayOptions,
  uuid: string,
): ModemOptions<QueuedReading> {
  const dir = options.outbox?.dir;
  return {
    clock: options.clock,
    rng: options.rng.fork("modem"),
    ...(options.identity === undefined ? {} : { identity: options.identity }),
    ...(options.link === undefined ? {} : { link: options.link }),
    broker: {
      ...options.broker,
      clientId: uuid,
      will: {
        topic: topicOf("gw/status", uuid),
        payload: { v: ENVELOPE_VERSION, online: false },
        retain: true,
      },
      subscriptions: [topicOf("gw/down", uuid)],
    },
    outbox: {
      capacity: options.outbox?.capacity ?? DEFAULT_GATEWAY_OUTBOX,
      ...(dir === undefined ? {} : { dir }),
      name: uuid,
      check: storedReadingFault,
    },
    envelope: (batch, sentAt) => ({
      topic: topicOf("gw/up", uuid),
      payload: gatewayUplink({
        messageId: batch.messageId,
        gatewayUuid: uuid,
        sentAt,
        readings: batch.entries.map(({ item }) => ({
          deviceAddress: item.deviceAddress ?? "",
          sensorCode: item.sensorCode ?? "",
          sensorId: item.sensorId ?? null,
          clockUnset: item.clockUnset === true,
          receivedAt: item.receivedAt,
          sequence: item.sequence,
          values: storedValues(item),
        })),
      }),
    }),
    ...(options.maxBatch === undefined ? {} : { maxBatch: options.maxBatch }),
    ...(options.retryMs === undefined ? {} : { retryMs: options.retryMs }),
  };
}
