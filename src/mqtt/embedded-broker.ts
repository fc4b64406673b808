import { createServer, type Server, type Socket } from "node:net";
import type { Aedes, AedesOptions, AuthenticateError, Client } from "aedes";
import { MQTT_PORT } from "../config/broker-spec.ts";
import { hostRefused, isAddressInUse, isAddressRefused, RpmlabError } from "../core/errors.ts";
import { clientIdDenied, type MqttIdentity, publishDenied, subscribeDenied } from "./acl.ts";
import type { Broker, BrokerOptions, PublishHandler } from "./broker.ts";
import { registerInProcess } from "./in-process.ts";
import { MAX_PACKET_BYTES, type PacketViolation, PacketWatch } from "./packet-watch.ts";
import { redeliveryPersistence } from "./redelivery-persistence.ts";

/** Where the embedded broker listens unless told otherwise: the loopback interface only. */
const DEFAULT_HOST = "127.0.0.1";
/** [MQTT-3.2.2-3] CONNACK return codes used when a CONNECT is refused. */
const IDENTIFIER_REJECTED = 2;
const SERVER_UNAVAILABLE = 3;
const BAD_USERNAME_OR_PASSWORD = 4;
const NOT_AUTHORIZED = 5;

/**
 * aedes' `concurrency`, the messages its mqemitter routes at once: no cap. With aedes' default
 * (100), messages published while 100 are still being delivered wait in mqemitter's queue, and
 * mqemitter 7.1 drains that queue by recursion (released → _do → parallel → released) for as
 * long as the next message's routing completes synchronously, as it does for a message no
 * client subscribes to. The tap hands a whole committed batch to aedes at once (up to
 * MAX_BATCH, src/ingest/ingestor.ts), and nothing usually subscribes to uplinks and statuses
 * here: queued behind 100 pending deliveries (the downlinks answering a fleet's check-ins),
 * about 3,000 of them overflowed the stack, a RangeError thrown in an aedes callback that ends
 * the process (test/ingest/broker-tap.test.ts; mcollina/mqemitter#204, still open). Without
 * the cap nothing queues. What is in flight stays bounded all the same: aedes reads a
 * connection's next packets only once those of its last read were routed, and the tap lets a
 * message through only once its batch committed.
 */
const UNLIMITED = 0;

function refusal(message: string, returnCode: number): AuthenticateError {
  return Object.assign(new Error(message), { returnCode }) as AuthenticateError;
}

/**
 * aedes 1.x in this process (`embedded`, `embedded:PORT`). aedes must be awaited
 * (`Aedes.createBroker()`), and closing its net server alone leaves clients and the broker's
 * timers alive (STYLE "Pitfalls"): stop() closes all three.
 */
export class EmbeddedBroker implements Broker {
  readonly sharedSubscriptions = false;
  readonly describe: string;
  private aedes: Aedes | undefined;
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly identities = new WeakMap<Client, MqttIdentity>();
  /** The open connections of each username, so a rotated credential can end them. */
  private readonly connectionsOf = new Map<string, Set<Client>>();
  private boundUrl: string | undefined;
  private boundPort: number | undefined;
  private unregister: (() => void) | undefined;
  private tapped: { accepts: (topic: string) => boolean; handler: PublishHandler } | undefined;

  constructor(
    private readonly port: number,
    private readonly options: BrokerOptions = {},
  ) {
    this.describe = port === MQTT_PORT ? "embedded" : `embedded:${port}`;
  }

  private get host(): string {
    return this.options.host ?? DEFAULT_HOST;
  }

  get url(): string {
    if (this.boundUrl === undefined) {
      throw new RpmlabError("E_USAGE", `${this.describe}: the broker has no URL before start()`);
    }
    return this.boundUrl;
  }

  async start(): Promise<void> {
    if (this.aedes !== undefined) return;
    const { Aedes } = await import("aedes");
    const aedes = await Aedes.createBroker({
      ...this.handlers(),
      concurrency: UNLIMITED,
      persistence: redeliveryPersistence(),
    });
    const server = createServer(aedes.handle);
    server.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.once("close", () => this.sockets.delete(socket));
      // aedes reads with 'readable', which keeps precedence: a 'data' listener sees each chunk
      // as aedes reads it, without changing how the socket flows.
      const watch = new PacketWatch(MAX_PACKET_BYTES, (violation) => {
        this.options.logger?.warn(
          { remote: socket.remoteAddress, ...violation },
          `${describeViolation(violation)}: connection closed`,
        );
        // [MQTT-3.1.2-2]: the CONNACK goes out before the close (a write to a writable socket
        // leaves at once; aedes' own parse error then closes the connection too).
        if (violation.kind === "protocol-level") socket.end(UNACCEPTABLE_PROTOCOL_LEVEL);
        socket.destroy();
      });
      socket.on("data", (chunk: Buffer) => watch.push(chunk));
    });
    try {
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        // Started again after a stop: the same port, so its clients reconnect where they were.
        server.listen(this.boundPort ?? this.port, this.host, () => {
          server.off("error", reject);
          resolve();
        });
      });
    } catch (error) {
      await closeAedes(aedes);
      throw this.listenError(error);
    }
    const address = server.address();
    const port = typeof address === "object" && address !== null ? address.port : this.port;
    // An IPv6 address is bracketed in a URL (RFC 3986 §3.2.2).
    this.boundUrl = `mqtt://${this.host.includes(":") ? `[${this.host}]` : this.host}:${port}`;
    this.boundPort = port;
    this.aedes = aedes;
    this.server = server;
    this.unregister = registerInProcess(this.boundUrl, aedes.handle);
    const log = this.options.logger;
    aedes.on("clientError", (client, error) =>
      log?.debug({ client: client.id, err: error.message }, "mqtt client error"),
    );
    aedes.on("connectionError", (client, error) =>
      log?.debug({ client: client.id, err: error.message }, "mqtt connection refused"),
    );
    log?.info({ url: this.boundUrl }, "embedded MQTT broker listening");
  }

  async stop(): Promise<void> {
    const { aedes, server } = this;
    this.aedes = undefined;
    this.server = undefined;
    this.unregister?.();
    this.unregister = undefined;
    if (aedes === undefined || server === undefined) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    await closeAedes(aedes);
    // aedes ends its clients; anything still half-open (a CONNECT never sent) ends here.
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  publish(topic: string, payload: Buffer): Promise<void> {
    const aedes = this.aedes;
    if (aedes === undefined) {
      return Promise.reject(
        new RpmlabError("E_BROKER_UNAVAILABLE", `${this.describe}: the broker is not running`),
      );
    }
    return new Promise((resolve, reject) =>
      aedes.publish(
        { cmd: "publish", topic, payload, qos: 1, retain: false, dup: false },
        (error) => (error ? reject(error) : resolve()),
      ),
    );
  }

  /**
   * Ends every connection `username` opened with the credential just replaced: a password is
   * checked at CONNECT only, so a gateway connected with a leaked password went on publishing
   * readings and reading its downlinks after the admin rotated it. A lost link (no DISCONNECT):
   * the broker publishes the will, and the client reconnects with its new password or not at all.
   */
  endConnectionsOf(username: string): void {
    const clients = this.connectionsOf.get(username);
    if (clients === undefined) return;
    this.connectionsOf.delete(username);
    for (const client of clients) client.close();
  }

  tap(accepts: (topic: string) => boolean, handler: PublishHandler): void {
    this.tapped = { accepts, handler };
  }

  /** The last step of authorizePublish: the tap, when it takes the topic, decides when. */
  private pass(
    packet: { topic: string; payload: Buffer | string },
    done: (e: Error | null) => void,
  ) {
    const tapped = this.tapped;
    if (tapped === undefined || !tapped.accepts(packet.topic)) {
      done(null);
      return;
    }
    const payload =
      typeof packet.payload === "string" ? Buffer.from(packet.payload) : packet.payload;
    tapped.handler(packet.topic, payload, (committed) =>
      done(committed ? null : new Error("not committed: the ingestion core is stopping")),
    );
  }

  private track(client: Client, username: string): void {
    if (client.closed || client.conn.destroyed) return;
    let clients = this.connectionsOf.get(username);
    if (clients === undefined) {
      clients = new Set();
      this.connectionsOf.set(username, clients);
    }
    clients.add(client);
    client.conn.once("close", () => {
      const open = this.connectionsOf.get(username);
      open?.delete(client);
      if (open?.size === 0) this.connectionsOf.delete(username);
    });
  }

  /** A taken port is E_PORT_IN_USE, as for the HTTP API's: one code for scripts to match. */
  private listenError(error: unknown): RpmlabError {
    const details = { field: "broker", port: this.port };
    if (isAddressInUse(error))
      return new RpmlabError(
        "E_PORT_IN_USE",
        `port ${this.port} on ${this.host} is taken, probably by another MQTT broker: use it with --broker mqtt://127.0.0.1:${this.port}, or choose another port with --broker embedded:PORT`,
        details,
        error,
      );
    // The address serve's --host gave (the HTTP API's error had it listened first).
    if (this.options.host !== undefined && isAddressRefused(error)) {
      return hostRefused(error, this.host, this.port);
    }
    return new RpmlabError(
      "E_BROKER_UNAVAILABLE",
      `cannot listen on ${this.host}:${this.port}: ${error instanceof Error ? error.message : error}`,
      details,
      error,
    );
  }

  /** The topic guard always; credentials and the ACL (acl.ts) when given an authenticator. */
  private handlers(): AedesOptions {
    const auth = this.options.auth;
    // [MQTT-3.1.2-14]: a will QoS of 3 is a protocol violation; the connection is closed.
    const preConnect: AedesOptions["preConnect"] = (_client, packet, done) =>
      (packet.will?.qos ?? 0) > 2
        ? done(new Error("will QoS 3 ([MQTT-3.1.2-14])"), false)
        : done(null, true);
    if (auth === undefined) {
      return {
        preConnect,
        authorizePublish: (_client, packet, done) => {
          const refused = packetRefused(packet);
          if (refused === null) this.pass(packet, done);
          else done(new Error(refused));
        },
      };
    }
    const identities = this.identities;
    return {
      preConnect,
      authenticate: (client, username, password, done) => {
        if (username === undefined || password === undefined) {
          done(refusal("credentials required", NOT_AUTHORIZED), false);
          return;
        }
        auth.authenticate(username, password.toString("utf8")).then(
          (identity) => {
            if (identity === null) {
              done(refusal("bad username or password", BAD_USERNAME_OR_PASSWORD), false);
              return;
            }
            const denied = clientIdDenied(identity, client.id);
            if (denied !== null) {
              // [MQTT-3.1.3-9]: a client id the server rejects is 0x02, whatever the reason.
              done(refusal(denied, IDENTIFIER_REJECTED), false);
              return;
            }
            identities.set(client, identity);
            this.track(client, identity.username);
            done(null, true);
          },
          (error: unknown) =>
            done(refusal(`cannot check credentials: ${error}`, SERVER_UNAVAILABLE), false),
        );
      },
      // [MQTT-3.3.5-2] a refused PUBLISH cannot be NACKed in 3.1.1: aedes closes the connection.
      // Also the last will: aedes authorises it when it publishes it, with its client.
      authorizePublish: (client, packet, done) => {
        const identity = client === null ? undefined : identities.get(client);
        const denied =
          packetRefused(packet) ??
          (identity === undefined ? "no identity" : publishDenied(identity, packet.topic));
        if (denied === null) {
          this.pass(packet, done);
          return;
        }
        // Logged, not only closed: a device retransmits its refused QoS 1 message at every
        // reconnection, and without this line it would look like a flaky link.
        this.options.logger?.warn(
          { client: client?.id ?? null, topic: packet.topic, reason: denied },
          "publication refused: connection closed",
        );
        done(new Error(denied));
      },
      // [MQTT-3.9.3] a refused filter is granted 0x80 in the SUBACK; the connection stays.
      authorizeSubscribe: (client, sub, done) => {
        const identity = identities.get(client);
        const denied =
          identity === undefined ? "no identity" : subscribeDenied(identity, sub.topic);
        done(null, denied === null ? sub : null);
      },
    };
  }
}

/**
 * Topics the embedded broker refuses from every client: `$SYS/` (aedes' own default rule), and
 * topics with an empty level ("rpm/v1/gw//up"): aedes 1.2 routes those to a `+` subscriber but
 * does not queue them for its persistent session, then drops that subscriber ("no such packet")
 * when it tries to deliver one — a publisher could cut the ingestion core off at will.
 */
export function topicRefused(topic: string): string | null {
  if (topic.startsWith("$SYS/")) return "$SYS/ topics are reserved to the broker";
  // An empty level: an empty topic, a leading or trailing "/", or "//" (checked on every PUBLISH).
  if (topic === "" || topic.startsWith("/") || topic.endsWith("/") || topic.includes("//")) {
    return `topic "${topic}" has an empty level`;
  }
  return null;
}

/**
 * A PUBLISH no client may send: a topic topicRefused refuses, or QoS 1 or 2 with packet
 * identifier 0 ([MQTT-2.3.1-1]: non-zero), which aedes would acknowledge as PUBACK(0).
 */
function packetRefused(packet: { topic: string; qos: number; messageId?: number }): string | null {
  const refused = topicRefused(packet.topic);
  if (refused !== null) return refused;
  return packet.qos > 0 && packet.messageId === 0 ? "packet identifier 0 ([MQTT-2.3.1-1])" : null;
}

function closeAedes(aedes: Aedes): Promise<void> {
  return new Promise((resolve) => aedes.close(() => resolve()));
}

/** CONNACK, return code 0x01 ([MQTT-3.2.2-3] table 3.1). */
const UNACCEPTABLE_PROTOCOL_LEVEL = Buffer.from([0x20, 0x02, 0x00, 0x01]);

function describeViolation(violation: PacketViolation): string {
  switch (violation.kind) {
    case "too-large":
      return violation.length === null
        ? "mqtt packet length malformed (a fifth length octet)"
        : `mqtt packet of ${violation.length} octets, over ${MAX_PACKET_BYTES}`;
    case "packet-id-zero":
      return `${violation.packet} with packet identifier 0 ([MQTT-2.3.1-1])`;
    case "protocol-level":
      return `CONNECT at protocol level ${violation.level}: CONNACK 0x01 ([MQTT-3.1.2-2])`;
  }
}
