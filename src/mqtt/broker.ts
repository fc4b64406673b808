import { parseBrokerSpec, redactBrokerSpec } from "../config/broker-spec.ts";
import type { Logger } from "../core/logger.ts";
import type { BrokerAuth } from "./credentials.ts";
import { EmbeddedBroker } from "./embedded-broker.ts";

/**
 * The MQTT broker boundary (DESIGN.md "Boundaries"): the embedded aedes broker, or an external
 * broker (Mosquitto, EMQX…) the lab only connects to. Chosen by a spec string; the constructor
 * does nothing, `start()` listens (embedded) and `stop()` ends everything it started.
 */
export interface Broker {
  /** What clients connect to, e.g. mqtt://127.0.0.1:1883; for `embedded:0`, known after start. */
  readonly url: string;
  /** The spec string for messages, password redacted. */
  readonly describe: string;
  /**
   * Whether the broker delivers each message of a `$share/{group}/…` subscription to one member
   * of the group ([MQTT-4.8.2]). aedes 1.x does not: the ingestion core subscribes plainly there.
   */
  readonly sharedSubscriptions: boolean;
  start(): Promise<void>;
  /** Disconnects every client and frees the port, so the process can exit. */
  stop(): Promise<void>;
  /**
   * Embedded broker only: from now on, each PUBLISH on a topic `accepts` approves (and the ACL
   * allows) goes to `handler` before the broker routes it, and its publisher gets the PUBACK
   * only once `handler` settles it committed. Settled not committed, the broker refuses it
   * ([MQTT-3.3.5-2]: closes the connection; the publisher sends it again). A later call
   * replaces the handler.
   */
  tap?(accepts: (topic: string) => boolean, handler: PublishHandler): void;
  /**
   * Embedded broker only: publishes from inside the broker (QoS 1, not retained), as the lab's
   * own downlink sender; resolves once the broker has routed it (queued for persistent sessions).
   */
  publish?(topic: string, payload: Buffer): Promise<void>;
  /**
   * Embedded broker only: ends the open connections of `username`, whose credential was just
   * issued again (its old password no longer valid). An external broker's credentials are its own.
   */
  endConnectionsOf?(username: string): void;
}

/** A tapped PUBLISH: its topic and payload, and the callback that lets the broker go on. */
export type PublishHandler = (
  topic: string,
  payload: Buffer,
  settle: (committed: boolean) => void,
) => void;

export interface BrokerOptions {
  /**
   * Embedded broker only: check credentials and apply the lab's ACL (acl.ts). Without it the
   * broker is open to anyone, as tests of the raw broker want. An external broker's ACL is its
   * own configuration (README "MQTT").
   */
  readonly auth?: BrokerAuth;
  /**
   * Embedded broker only: the address it listens on (default 127.0.0.1). `serve` passes its
   * `--host`, so a lab opened to the network for its API takes gateways from there too.
   */
  readonly host?: string;
  readonly logger?: Logger;
}

/** The broker a spec string names: `embedded`, `embedded:PORT`, `mqtt://…`, `mqtts://…`. */
export function createBroker(spec: string, options: BrokerOptions = {}): Broker {
  const parsed = parseBrokerSpec(spec);
  if (parsed.kind === "embedded") return new EmbeddedBroker(parsed.port, options);
  return new ExternalBroker(parsed.url, redactBrokerSpec(spec));
}

/** A broker the lab does not run: nothing to start or stop, only where to connect. */
export class ExternalBroker implements Broker {
  // Mosquitto ≥ 1.6, EMQX, HiveMQ and VerneMQ all support shared subscriptions.
  readonly sharedSubscriptions = true;

  constructor(
    readonly url: string,
    readonly describe: string = redactBrokerSpec(url),
  ) {}

  async start(): Promise<void> {}

  async stop(): Promise<void> {}
}
