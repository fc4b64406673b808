import type { Broker } from "../../mqtt/broker.ts";
import { isIngestTopic } from "../../mqtt/topics.ts";
import type { IngestSink, IngestSource } from "../source.ts";

type TappableBroker = Broker & Required<Pick<Broker, "tap">>;

/**
 * Ingestion from the embedded broker, in this process: each uplink and status PUBLISH is taken
 * as the broker authorises it, and its publisher gets the PUBACK once its batch committed.
 *
 * Why not a subscription as on an external broker: aedes keeps its sessions in memory, so a
 * message it acknowledged to the gateway and queued for the ingestion session would die with
 * the process — the gateway, holding a PUBACK, would never send it again. Here the gateway's
 * PUBACK means "stored", and a crash before the commit leaves the reading in the gateway's
 * outbox. It also spares the broker a delivery, and the ingestion core an MQTT client.
 * aedes handles the packets of one socket read together and reads on once all of them are
 * done, so a publisher waits for the commit before more of its messages are taken in.
 */
export class BrokerTap implements IngestSource {
  readonly describe: string;

  private constructor(private readonly broker: TappableBroker) {
    this.describe = `tap on ${broker.describe}`;
    // Until start(), an uplink or status is refused (not committed), as after stop(): a broker
    // that listens before ingestion runs would otherwise acknowledge it to a gateway or device,
    // which then forgets a reading nobody stores. It sends it again on its next connection.
    broker.tap(isIngestTopic, (_topic, _payload, settle) => settle(false));
  }

  /**
   * The tap of a broker in this process; undefined for a broker the lab only connects to. Take
   * it before the broker starts listening.
   */
  static of(broker: Broker): BrokerTap | undefined {
    return broker.tap === undefined ? undefined : new BrokerTap(broker as TappableBroker);
  }

  async start(sink: IngestSink): Promise<void> {
    this.broker.tap(isIngestTopic, (topic, payload, settle) =>
      // aedes bounds what it takes in per connection: nothing to pause.
      sink.deliver({ topic, payload }, settle, () => {}),
    );
  }

  /**
   * The tap stays: a PUBLISH arriving after this is settled not committed by the stopped core
   * and refused, never acknowledged unstored.
   */
  async stop(): Promise<void> {}
}
