import { connect, type MqttClient } from "mqtt";
import { afterEach, describe, expect, it } from "vitest";
import type { Logger } from "../../src/core/logger.ts";
import type { Received } from "../../src/ingest/source.ts";
import { MqttSubscription } from "../../src/ingest/sources/subscription.ts";
import { type Broker, createBroker } from "../../src/mqtt/broker.ts";
import { within } from "../mqtt/helpers.ts";

/**
 * What `serve` logs when its ingest subscription on an external broker comes back: whether the
 * broker kept the persistent session (CONNACK session present, [MQTT-3.2.2-2]). Without it,
 * what the broker accepted meanwhile is gone, and an operator needs to know.
 */

const CLIENT_ID = "rpmlab-ingest-reconnect";

/** Log lines as "level message", and a wait for the next one matching. */
function capturingLogger() {
  const lines: string[] = [];
  const waiters: Array<{ match: RegExp; resolve: () => void }> = [];
  const log = (level: string) => (_fields: unknown, message: string) => {
    const line = `${level} ${message}`;
    lines.push(line);
    for (const w of [...waiters]) {
      if (w.match.test(line)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  const logger = {
    info: log("info"),
    warn: log("warn"),
    error: log("error"),
    debug: () => undefined,
  } as unknown as Logger;
  const next = (match: RegExp) =>
    within(new Promise<void>((resolve) => waiters.push({ match, resolve })), `a log ${match}`);
  return { lines, logger, next };
}

describe("ingest subscription reconnections", () => {
  let broker: Broker | undefined;
  let subscription: MqttSubscription | undefined;
  const clients: MqttClient[] = [];

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.endAsync(true)));
    await subscription?.stop();
    await broker?.stop();
  });

  it("logs whether the broker kept its session, and receives again either way", async () => {
    broker = createBroker("embedded:0");
    await broker.start();
    const { lines, logger, next } = capturingLogger();
    const received: Received[] = [];
    const arrived: Array<() => void> = [];
    subscription = new MqttSubscription({
      url: broker.url,
      clientId: CLIENT_ID,
      sharedGroup: null,
      logger,
    });
    await subscription.start({
      deliver(message, settle, proceed) {
        received.push(message);
        for (const resolve of arrived.splice(0)) resolve();
        settle(true);
        proceed();
      },
    });
    const publish = async (topic: string) => {
      const got = within(new Promise<void>((resolve) => arrived.push(resolve)), topic);
      const gateway = clients[clients.push(connect(broker!.url, { reconnectPeriod: 0 })) - 1]!;
      await gateway.publishAsync(topic, "{}", { qos: 1 });
      await got;
    };

    // Another client takes the id over: the broker ends this connection and keeps the session.
    const kept = next(/reconnected to its session/);
    const intruder = connect(broker.url, { clientId: CLIENT_ID, clean: false, reconnectPeriod: 0 });
    clients.push(intruder);
    await within(
      new Promise((resolve) => intruder.once("connect", resolve)),
      "the intruder to connect",
    );
    await intruder.endAsync();
    await kept;
    await publish("rpm/v1/gw/0A1B2C3D4E5F/up");

    // The embedded broker keeps sessions in memory: a restart forgets them.
    const lost = next(/reconnected on a new session/);
    await broker.stop();
    await broker.start();
    await lost;
    // MQTT.js subscribed again on the new session.
    await publish("rpm/v1/gw/0A1B2C3D4E5F/up");

    expect(lines.filter((l) => /reconnected/.test(l))).toEqual([
      "info ingest subscription reconnected to its session",
      "warn ingest subscription reconnected on a new session: messages the broker accepted while it was away were not kept for it",
    ]);
    expect(received.map((m) => m.topic)).toEqual([
      "rpm/v1/gw/0A1B2C3D4E5F/up",
      "rpm/v1/gw/0A1B2C3D4E5F/up",
    ]);
  });
});
