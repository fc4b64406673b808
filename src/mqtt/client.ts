import { connect, ErrorWithSubackPacket, type IClientOptions, MqttClient } from "mqtt";
import { redactBrokerSpec, withoutCredentials } from "../config/broker-spec.ts";
import { debugLogsWanted } from "../config/debug-env.ts";
import { RpmlabError } from "../core/errors.ts";
import { inProcessStreamBuilder } from "./in-process.ts";

/**
 * MQTT.js clients as the lab opens them: MQTT 3.1.1 (aedes 1.x speaks no other; Mosquitto
 * speaks both), QoS 1 delivery on persistent sessions unless told otherwise. Resolves on the
 * first CONNACK; the first failure rejects with E_BROKER_UNAVAILABLE (unreachable) or
 * E_BROKER_REFUSED (CONNACK refused: credentials, client id), and the client is ended.
 */
export interface LabClientOptions {
  readonly clientId: string;
  readonly username?: string;
  readonly password?: string;
  /** Default false: a persistent session ([MQTT-3.1.2-4]) keeps subscriptions and QoS 1 queues. */
  readonly clean?: boolean;
  readonly will?: IClientOptions["will"];
  /** MQTT.js reconnects after this many ms (0: never). Default 1000. */
  readonly reconnectPeriod?: number;
  readonly keepalive?: number;
  /** Installed before the connection opens, so no message slips past it. */
  readonly handleMessage?: MqttClient["handleMessage"];
  /** Called with the client before it connects (e.g. to wrap its internals). */
  readonly prepare?: (client: MqttClient) => void;
  /** Errors after the first CONNACK (MQTT.js reconnects by itself). Default: ignored. */
  readonly onError?: (error: Error) => void;
  /**
   * Gives up waiting for the CONNACK: the client is ended and the promise rejects with the
   * signal's reason. Without it a stop (Ctrl-C) waits for a silent broker's connect timeout.
   */
  readonly signal?: AbortSignal;
}

/** CONNACK return codes of MQTT 3.1.1 (§3.2.2.3) that refuse a client. */
const REFUSED: Record<number, string> = {
  1: "unacceptable protocol version",
  2: "client identifier rejected",
  3: "server unavailable",
  4: "bad user name or password",
  5: "not authorized",
};

/**
 * An MQTT.js client error in the lab's terms: E_BROKER_REFUSED with the CONNACK's reason when
 * the broker refused the client, E_BROKER_UNAVAILABLE otherwise; the URL without credentials.
 */
export function brokerError(error: Error & { code?: unknown }, url: string, clientId: string) {
  const where = redactBrokerSpec(url);
  const code = error.code;
  const refused = typeof code === "number" ? REFUSED[code] : undefined;
  return refused === undefined
    ? new RpmlabError(
        "E_BROKER_UNAVAILABLE",
        `cannot reach the MQTT broker at ${where}: ${error.message}`,
        { field: "broker", value: where },
        error,
      )
    : new RpmlabError(
        "E_BROKER_REFUSED",
        `the MQTT broker at ${where} refused client ${clientId}: ${refused}`,
        { field: "broker", value: where, returnCode: code },
        error,
      );
}

export function connectClient(url: string, options: LabClientOptions): Promise<MqttClient> {
  if (options.signal?.aborted) return Promise.reject(options.signal.reason);
  const opts: IClientOptions = {
    protocolVersion: 4,
    clientId: options.clientId,
    clean: options.clean ?? false,
    reconnectPeriod: options.reconnectPeriod ?? 1000,
    connectTimeout: 10_000,
    keepalive: options.keepalive ?? 30,
    resubscribe: true,
    manualConnect: true,
    ...(debugLogsWanted() ? {} : { log: noLog }),
    ...(options.username === undefined ? {} : { username: options.username }),
    ...(options.password === undefined ? {} : { password: options.password }),
    ...(options.will === undefined ? {} : { will: options.will }),
  };
  const inProcess = inProcessStreamBuilder(url);
  // MQTT.js takes a URL's user name and password over the options': credentials given apart
  // (a device's own) must not be replaced by those a shared broker URL carries.
  const client =
    inProcess === undefined
      ? connect(options.username === undefined ? url : withoutCredentials(url), opts)
      : new MqttClient(inProcess, { ...credentialsOf(url), ...opts });
  if (options.handleMessage !== undefined) client.handleMessage = options.handleMessage;
  options.prepare?.(client);
  return new Promise((resolve, reject) => {
    const { signal } = options;
    const onConnect = () => {
      client.off("error", onError);
      signal?.removeEventListener("abort", onAbort);
      // An EventEmitter without an error listener throws: keep one for the client's life.
      client.on("error", (error) => options.onError?.(error));
      resolve(client);
    };
    /** This client is dropped. */
    const drop = () => {
      client.off("connect", onConnect);
      client.off("error", onError);
      signal?.removeEventListener("abort", onAbort);
      // MQTT.js makes a manualConnect client reconnectable again once end() finishes, and the
      // refused socket's close then arms its reconnect interval: the process never exited after
      // reporting E_BROKER_UNAVAILABLE.
      client.options.reconnectPeriod = 0;
      client.end(true);
    };
    const onAbort = () => {
      drop();
      // The socket may still fail while it closes (a refusal already on its way): an emitter
      // with no error listener would throw it.
      client.on("error", () => {});
      reject(signal!.reason);
    };
    const onError = (error: Error & { code?: unknown }) => {
      drop();
      reject(brokerError(error, url, options.clientId));
    };
    client.once("connect", onConnect);
    client.once("error", onError);
    signal?.addEventListener("abort", onAbort, { once: true });
    client.connect();
  });
}

/**
 * MQTT.js's own debug logger, left out unless DEBUG is set (DEBUG=mqttjs* still shows it): the
 * client calls it several times per packet, and each disabled call still costs its arguments and
 * the debug module's checks — about a sixtieth of a 1,000-gateway scenario's time, 2026-11-28.
 */
function noLog(): void {}

/** User and password written in a broker URL, as connect() reads them. */
function credentialsOf(url: string): Pick<IClientOptions, "username" | "password"> {
  const { username, password } = new URL(url);
  return {
    ...(username === "" ? {} : { username: decodeURIComponent(username) }),
    ...(password === "" ? {} : { password: decodeURIComponent(password) }),
  };
}

/** Subscribes at QoS 1; E_BROKER_REFUSED when the broker refuses a filter (SUBACK 0x80). */
export async function subscribeAll(client: MqttClient, filters: readonly string[]): Promise<void> {
  const refused = (granted: readonly number[]) =>
    new RpmlabError(
      "E_BROKER_REFUSED",
      `the broker refused the subscription to ${filters.filter((_, i) => granted[i] === 128).join(", ")}`,
      { field: "topic" },
    );
  try {
    const granted = await client.subscribeAsync([...filters], { qos: 1 });
    if (granted.some((g) => g.qos === 128)) throw refused(granted.map((g) => g.qos));
  } catch (error) {
    // MQTT.js 5 rejects a SUBACK with a failure code ([MQTT-3.9.3] 0x80).
    if (error instanceof ErrorWithSubackPacket) throw refused(error.packet.granted as number[]);
    throw error;
  }
}
