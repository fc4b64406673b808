import { quotedValue } from "../core/clip.ts";
import { RpmlabError } from "../core/errors.ts";
import { DEFAULT_BROKER, parseBrokerSpec } from "./broker-spec.ts";
import { parseClientDomain } from "./client-domain.ts";
import { type FulfilmentConfig, fulfilmentConfig } from "./fulfilment-config.ts";
import { fulfilmentAssignments, readFulfilmentFile } from "./fulfilment-inputs.ts";
import { resolveStoreSpec, storeSource } from "./lab-store.ts";
import { parseRateLimit, type RateLimit } from "./rate-limit.ts";
import { parseStoreSpec } from "./store-spec.ts";
import {
  DEFAULT_WEBHOOK_CONCURRENCY,
  DEFAULT_WEBHOOK_SENDER,
  DEFAULT_WEBHOOK_TIMEOUT_MS,
  parseWebhookConcurrency,
  parseWebhookTimeout,
  type WebhookDeliveryConfig,
} from "./webhook-config.ts";

/** Environment variable holding the lab admin token, so scripts can fix it across restarts. */
export const ADMIN_TOKEN_ENV = "RPMLAB_ADMIN_TOKEN";
/**
 * serve's --broker when the flag is not given: an external broker's URL carries the lab
 * service's user name and password (it reads every device topic and writes every downlink),
 * and a command line is readable by every user of the machine (`ps`, /proc/PID/cmdline).
 */
export const BROKER_ENV = "RPMLAB_BROKER";

/** The port Django's development server uses, and so what the real service's clients test on. */
export const DEFAULT_HTTP_PORT = 8000;
export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_CLIENT_DOMAIN = "lab";
export const DEFAULT_INGEST_ID = "rpmlab-ingest";

/** Flags of `rpmlab serve`, as commander hands them over (strings, unparsed). */
export interface ServeFlags {
  store?: string;
  broker?: string;
  port?: string;
  host?: string;
  rateLimit?: string;
  clientDomain?: string;
  adminToken?: string;
  ingestId?: string;
  ingestGroup?: string;
  /** A YAML or JSON file of fulfilment settings (README "Fulfilment"). */
  fulfilmentConfig?: string;
  /** `key=value` fulfilment settings, applied over the file's. */
  fulfilment?: string[];
  webhookTimeout?: string;
  webhookConcurrency?: string;
}

/** Everything `rpmlab serve` needs, validated: one error names the option at fault. */
export interface ServeConfig {
  readonly store: string;
  readonly broker: string;
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly rateLimit: RateLimit | null;
  readonly clientDomain: string;
  /** undefined: a fresh token is drawn at start and printed. */
  readonly adminToken: string | undefined;
  /**
   * MQTT client id of this ingest process: stable across restarts (its persistent session keeps
   * what arrived while it was down) and unique among the processes sharing a broker.
   */
  readonly ingestId: string;
  /**
   * Shared-subscription group of several ingest processes splitting an external broker's load
   * ([MQTT-4.8.2] `$share/{group}/…`), or null: one process on a plain subscription.
   */
  readonly ingestGroup: string | null;
  /** The fulfilment simulator's settings: defaults, then the file, then the assignments. */
  readonly fulfilment: FulfilmentConfig;
  /** The webhook sender boundary's spec (DESIGN.md "Boundaries"): serve posts over HTTP. */
  readonly webhookSender: string;
  /** Per endpoint: each attempt's timeout and the requests in flight at most. */
  readonly webhooks: WebhookDeliveryConfig;
  /** How long finished deliveries stay in the log (default 7 days); scenarios keep a whole run. */
  readonly webhookRetentionMs?: number;
  /**
   * How often the dispatcher looks for work it was not nudged about (default 1 s of the lab's
   * clock): a scenario's lab has no other process writing its outbox, and a virtual day of
   * one-second polls would cost more than its readings.
   */
  readonly webhookPollMs?: number;
  /**
   * How often fulfilment and supply shipping re-read the schedule for steps that other processes
   * sharing the store scheduled (default 30 s of the lab's clock; 0: never, as in a scenario,
   * whose lab is its store's only writer).
   */
  readonly scheduleResyncMs?: number;
  /**
   * Seed of the stream the store draws public ids from (default "rpmlab-serve"): a scenario's
   * run gives its own seed, so `--seed` changes ids as it changes every other draw.
   */
  readonly idSeed?: string;
}

export function serveConfig(
  flags: ServeFlags,
  env: Readonly<Record<string, string | undefined>> = process.env,
): ServeConfig {
  const store = resolveStoreSpec(flags.store, env);
  const source = storeSource(flags.store, env);
  // The source always: "invalid store" alone does not say which flag or variable to fix.
  parseStoreSpec(store, source);
  const broker = resolveBroker(flags.broker, env);
  const portText = flags.port ?? String(DEFAULT_HTTP_PORT);
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65_535) {
    throw new RpmlabError(
      "E_CONFIG_INVALID",
      `--port must be a whole number from 0 (any free port) to 65535, got "${portText}"`,
      { field: "port" },
    );
  }
  // An empty variable is unset (as RPMLAB_STORE's is); an empty --admin-token is a mistake.
  const fromEnv = flags.adminToken === undefined;
  const adminToken = flags.adminToken ?? (env[ADMIN_TOKEN_ENV] || undefined);
  if (adminToken !== undefined && adminToken.length < 16) {
    const source = fromEnv ? `$${ADMIN_TOKEN_ENV}` : "--admin-token";
    throw new RpmlabError(
      "E_CONFIG_INVALID",
      `${source}: the admin token must be at least 16 characters, got ${adminToken.length}`,
      { field: "admin-token" },
    );
  }
  // HTTP clients strip a header value's leading and trailing whitespace, and refuse line breaks
  // and control characters (RFC 9110 §5.5): such a token (a secret file's trailing newline) was
  // printed, and never authenticated. Not echoed: it is a secret.
  if (adminToken !== undefined && /^\s|\s$|\p{Cc}/u.test(adminToken)) {
    throw new RpmlabError(
      "E_CONFIG_INVALID",
      `${fromEnv ? `$${ADMIN_TOKEN_ENV}` : "--admin-token"}: the admin token may not begin or end with spaces, nor hold line breaks or control characters: HTTP clients strip or refuse them in Authorization: Bearer <token>`,
      { field: "admin-token" },
    );
  }
  const host = flags.host ?? DEFAULT_HOST;
  // An empty host makes Node listen on every interface: a blank $HOST in a script must not
  // put the API and its admin token on the network.
  if (host.trim() === "") {
    throw new RpmlabError(
      "E_CONFIG_INVALID",
      `--host must name an address to listen on (default ${DEFAULT_HOST}; 0.0.0.0 for every interface), got an empty one`,
      { field: "host" },
    );
  }
  return {
    store,
    broker,
    host,
    port: Number(portText),
    rateLimit: flags.rateLimit === undefined ? null : parseRateLimit(flags.rateLimit),
    clientDomain:
      flags.clientDomain === undefined
        ? DEFAULT_CLIENT_DOMAIN
        : parseClientDomain(flags.clientDomain, "--client-domain"),
    adminToken,
    ingestId: ingestId(flags.ingestId ?? DEFAULT_INGEST_ID),
    ingestGroup: flags.ingestGroup === undefined ? null : ingestGroup(flags.ingestGroup),
    fulfilment: fulfilmentOf(flags),
    webhookSender: DEFAULT_WEBHOOK_SENDER,
    webhooks: {
      timeoutMs:
        flags.webhookTimeout === undefined
          ? DEFAULT_WEBHOOK_TIMEOUT_MS
          : parseWebhookTimeout(flags.webhookTimeout),
      concurrency:
        flags.webhookConcurrency === undefined
          ? DEFAULT_WEBHOOK_CONCURRENCY
          : parseWebhookConcurrency(flags.webhookConcurrency),
    },
  };
}

/**
 * The file checked on its own names itself in its errors; what is wrong once the --fulfilment
 * assignments are laid over it is theirs, and named so.
 */
function fulfilmentOf(flags: ServeFlags): FulfilmentConfig {
  const file =
    flags.fulfilmentConfig === undefined ? {} : readFulfilmentFile(flags.fulfilmentConfig);
  const assignments = fulfilmentAssignments(flags.fulfilment ?? []);
  try {
    return fulfilmentConfig(file, assignments);
  } catch (error) {
    if (!(error instanceof RpmlabError)) throw error;
    throw new RpmlabError(
      error.code,
      `--fulfilment: ${error.message}`,
      { ...error.details, source: "--fulfilment" },
      error.cause,
    );
  }
}

/** [MQTT-4.8.2] a share name has no "/", "+" or "#"; keep to the client id's portable set. */
function ingestGroup(text: string): string {
  if (!/^[A-Za-z0-9-]{1,64}$/.test(text)) {
    throw new RpmlabError(
      "E_CONFIG_INVALID",
      `--ingest-group must be 1 to 64 letters, digits or hyphens, got ${quotedValue(text)}`,
      { field: "ingest-group" },
    );
  }
  return text;
}

/** --broker, else $RPMLAB_BROKER (empty counts as unset, as $RPMLAB_STORE), else embedded. */
function resolveBroker(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string {
  const fromEnv = env[BROKER_ENV];
  if (flag === undefined && (fromEnv === undefined || fromEnv === "")) return DEFAULT_BROKER;
  const [spec, source] = flag === undefined ? [fromEnv!, `$${BROKER_ENV}`] : [flag, "--broker"];
  // Named, as every other option's error is; a CI job's environment is not something the
  // command line shows.
  parseBrokerSpec(spec, source);
  return spec;
}

/** MQTT 3.1.1 §3.1.3.1 allows any client id on most brokers; keep to a portable 1–23 set. */
function ingestId(text: string): string {
  if (!/^[A-Za-z0-9-]{1,23}$/.test(text)) {
    throw new RpmlabError(
      "E_CONFIG_INVALID",
      `--ingest-id must be 1 to 23 letters, digits or hyphens, got ${quotedValue(text)}`,
      { field: "ingest-id" },
    );
  }
  return text;
}
