import { RpmlabError } from "../core/errors.ts";
import { redactUrlSpec } from "./redact-url.ts";
import { fromSource } from "./spec-source.ts";

/**
 * The MQTT broker boundary's spec strings (DESIGN.md, "Boundaries"): `embedded` (aedes in this
 * process on the standard port), `embedded:PORT` (0: any free port), or an external broker by
 * URL, `mqtt://[user:password@]host[:port]` / `mqtts://…`, with no path, query or fragment.
 */
export type BrokerSpec =
  | { readonly kind: "embedded"; readonly port: number }
  | {
      readonly kind: "external";
      /** The URL as given, credentials included (MQTT.js takes them from it). */
      readonly url: string;
      readonly tls: boolean;
    };

/** The IANA port of MQTT (1883) and MQTT over TLS (8883). */
export const MQTT_PORT = 1883;
export const MQTTS_PORT = 8883;
export const DEFAULT_BROKER = "embedded";

const HELP = "expected embedded, embedded:PORT (0 = any free port), mqtt://host:port or mqtts://…";

/**
 * `source` names where the spec came from in errors (--broker, $RPMLAB_BROKER): "invalid broker"
 * alone does not say which flag or variable to fix.
 */
export function parseBrokerSpec(spec: string, source?: string): BrokerSpec {
  return fromSource(source, () => parseTrimmed(spec, spec.trim()));
}

function parseTrimmed(spec: string, text: string): BrokerSpec {
  if (text === "embedded") return { kind: "embedded", port: MQTT_PORT };
  if (text.startsWith("embedded:")) {
    const port = text.slice("embedded:".length);
    if (!/^\d{1,5}$/.test(port) || Number(port) > 65_535) {
      throw invalid(spec, `the port must be a whole number from 0 to 65535, got "${port}"`);
    }
    return { kind: "embedded", port: Number(port) };
  }
  if (text.startsWith("mqtt://") || text.startsWith("mqtts://")) return parseUrl(spec, text);
  throw invalid(spec, HELP);
}

function parseUrl(spec: string, text: string): BrokerSpec {
  let url: URL;
  try {
    url = new URL(text);
  } catch (cause) {
    // The URL parser refuses a port past 65535 as it refuses garbage: say which.
    const port = /^mqtts?:\/\/[^/]*:(\d+)\/?$/.exec(text)?.[1];
    if (port !== undefined && Number(port) > 65_535) {
      throw invalid(spec, `the port must be a whole number from 1 to 65535, got "${port}"`, cause);
    }
    throw invalid(spec, "not a valid URL", cause);
  }
  if (url.hostname === "") throw invalid(spec, "the URL names no host");
  // The URL parser reads ":0" as port 0, and MQTT.js then connects to 1883 as if none were given.
  if (url.port === "0")
    throw invalid(spec, 'the port must be a whole number from 1 to 65535, got "0"');
  if (url.pathname !== "" && url.pathname !== "/") {
    throw invalid(spec, `an MQTT broker URL has no path, got "${url.pathname}"`);
  }
  // MQTT.js reads a query's clientId over the client id it is given: every client of the lab
  // (ingestion, downlinks, gateways) would connect under that one id and take each other's
  // session ([MQTT-3.1.4-2]). Its other keys were silently dropped. The URL carries the host,
  // port and credentials; the rest is the lab's (README "Broker").
  if (url.search !== "" || text.includes("?")) {
    const keys = [...new Set(url.searchParams.keys())].filter((k) => k !== "");
    const got = keys.length === 0 ? "an empty one" : keys.map((k) => `"${k}"`).join(", ");
    throw invalid(
      spec,
      `an MQTT broker URL takes no query, got ${got}: client ids and session options are the lab's, set per client`,
    );
  }
  if (url.hash !== "" || text.includes("#")) {
    throw invalid(spec, `an MQTT broker URL takes no fragment, got "${url.hash || "#"}"`);
  }
  return { kind: "external", url: text, tls: url.protocol === "mqtts:" };
}

/**
 * The broker URL without its user name and password: what the lab hands to others (serve's
 * `mqtt_url`), who connect under credentials of their own — the URL's are the lab service's.
 */
export function withoutCredentials(url: string): string {
  return url.replace(/^(mqtts?:\/\/)[^/@]*@/, "$1");
}

/**
 * The spec string with any password replaced, for messages and logs; a query's values too (a
 * refused `?password=…` must not be echoed).
 */
export function redactBrokerSpec(spec: string): string {
  return redactUrlSpec(spec);
}

function invalid(spec: string, why: string, cause?: unknown): RpmlabError {
  const shown = redactBrokerSpec(spec);
  return new RpmlabError(
    "E_CONFIG_INVALID",
    `invalid broker "${shown}": ${why}`,
    { field: "broker", value: shown },
    cause,
  );
}
