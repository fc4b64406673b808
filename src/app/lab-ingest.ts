import type { Catalogue } from "../catalogue/catalogue.ts";
import type { ServeConfig } from "../config/serve-config.ts";
import type { Clock } from "../core/clock.ts";
import type { TypedEvents } from "../core/events.ts";
import type { Logger } from "../core/logger.ts";
import type { Rng } from "../core/rng.ts";
import type { FulfilmentEvents } from "../fulfilment/events.ts";
import { createDeviceServices } from "../fulfilment/services.ts";
import { Downlinks, downlinkChannel, downlinkClientId } from "../ingest/downlink.ts";
import { Ingestor } from "../ingest/ingestor.ts";
import type { BrokerTap } from "../ingest/sources/broker-tap.ts";
import { MqttSubscription } from "../ingest/sources/subscription.ts";
import { workerStoreOf } from "../ingest/worker-processor.ts";
import type { Broker } from "../mqtt/broker.ts";
import { WHITELIST_MAX } from "../mqtt/envelope.ts";
import type { Store } from "../store/store.ts";

export interface LabIngestDeps {
  readonly config: ServeConfig;
  readonly clock: Clock;
  readonly logger: Logger;
  /**
   * Registers what stops a part started here, stopped in reverse order with the lab's; `part`
   * names it if it fails to close.
   */
  readonly onStop: (part: string, stop: () => Promise<void>) => void;
  readonly store: Store;
  readonly broker: Broker;
  /** The embedded broker's tap (BrokerTap.of), taken before it started listening. */
  readonly tap: BrokerTap | undefined;
  readonly catalogue: Catalogue;
  readonly events: TypedEvents<FulfilmentEvents>;
  readonly rng: Rng;
  /** A batch stored measurements: their webhook outbox entry is committed. */
  readonly onStored: () => void;
  readonly started: (ingestor: Ingestor) => void;
}

/**
 * Ingestion as `rpmlab serve` composes it (Lab): the broker's uplinks stored by an Ingestor,
 * gateway adoption from check-ins, and the downlinks that answer them (whitelists, time).
 */
export async function startIngest(deps: LabIngestDeps): Promise<void> {
  const { store, broker, catalogue, config, clock, logger } = deps;
  // The embedded broker hands publishes over in process (BrokerTap: the gateway's PUBACK then
  // means stored); on an external broker, a subscription whose credentials travel in the URL.
  const source =
    deps.tap ??
    new MqttSubscription({
      url: broker.url,
      clientId: config.ingestId,
      sharedGroup: broker.sharedSubscriptions ? config.ingestGroup : null,
      logger: logger,
    });
  const ingestor = new Ingestor({
    source,
    store,
    catalogue,
    clock: clock,
    logger: logger,
    workerStore: workerStoreOf(config.store),
  });
  // A gateway that reports over MQTT is known from then on: devices activated on it while it
  // was unknown ("Unknown Gateway ID") are adopted, whitelisted and get their kept readings.
  const services = createDeviceServices({
    ...deps,
    clock: clock,
    fulfilment: config.fulfilment,
  });
  ingestor.events.on("batch", (batch) => {
    if (batch.stored.length > 0) deps.onStored();
  });
  // Spec 2.3: the lab tells each gateway its whitelist when it changes (activation, unlink,
  // replacement, adoption) and at a check-in that did not report holding exactly it, then the
  // time if the check-in shows its clock off (src/ingest/downlink.ts).
  const channel = await downlinkChannel(broker, downlinkClientId(config.ingestId));
  deps.onStop("the downlink channel", () => channel.close());
  const downlinks = new Downlinks({ store, clock: clock, channel, logger: logger });
  deps.events.on("whitelist.changed", ({ gatewayUuid }) => {
    void downlinks.sendWhitelist(gatewayUuid);
  });
  // A batch's statuses: the devices waiting for those gateways adopted (one lookup for all),
  // then each check-in answered.
  ingestor.events.on("batch", ({ outcomes }) => {
    const statuses = outcomes.filter((o) => o.kind === "status");
    if (statuses.length === 0) return;
    services.adoption
      .adoptAll(statuses.map((s) => s.gateway.gatewayUuid))
      .then((results) => {
        for (const [i, { gatewayUuid, crowdedOut }] of results.entries()) {
          // The whitelist is full (64): these stay Unknown Gateway ID until devices are unlinked.
          // Said at each check-in (README "Devices"); a last will is the gateway leaving, not one.
          if (crowdedOut.length === 0 || !statuses[i]!.online) continue;
          logger.warn(
            { gateway: gatewayUuid, devices: crowdedOut.map((d) => d.id), max: WHITELIST_MAX },
            "gateway whitelist full: devices left waiting",
          );
        }
        return Promise.all(
          statuses.map(({ gateway, online, whitelistHeld, receivedAt, checkinAt }, i) =>
            online
              ? downlinks.checkedIn(
                  gateway.gatewayUuid,
                  { at: checkinAt, receivedAt },
                  whitelistHeld && results[i]!.adopted.length === 0,
                )
              : undefined,
          ),
        );
      })
      .catch((error: unknown) => {
        logger.error(
          { err: error, gateways: statuses.map((s) => s.gateway.gatewayUuid) },
          "gateway adoption failed",
        );
      });
  });
  await ingestor.start();
  deps.onStop("ingestion", () => ingestor.stop());
  deps.started(ingestor);
}
