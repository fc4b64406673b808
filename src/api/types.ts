import type { FastifyPluginAsync, RawServerDefault } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import type { SupplyCatalogue } from "../asr/supply-catalogue.ts";
import type { SupplyRequests } from "../asr/supply-requests.ts";
import type { Catalogue } from "../catalogue/catalogue.ts";
import type { FulfilmentConfig } from "../config/fulfilment-config.ts";
import type { RateLimit } from "../config/rate-limit.ts";
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/logger.ts";
import type { Rng } from "../core/rng.ts";
import type { LabFeed } from "../dashboard/feed.ts";
import type { UndeliverableAddress } from "../fulfilment/address-verification.ts";
import type { FulfilmentEventSink } from "../fulfilment/events.ts";
import type { DeviceServices } from "../fulfilment/services.ts";
import type { Replay } from "../ingest/replay.ts";
import type { Store } from "../store/store.ts";
import type { AccountRow, ApiKeyRow } from "../store/types.ts";
import type { WebhookControl } from "../webhooks/control.ts";

export interface ApiConfig {
  /**
   * Scheme, host (and path prefix) of absolute URLs (pagination next/previous), e.g.
   * "https://lab.example". Without it they are built from the request's Host and
   * X-Forwarded-Proto headers.
   */
  readonly baseUrl?: string;
  /** Bearer token of the lab admin API (/lab/v1/); must not be empty. */
  readonly adminToken: string;
  /** Per-key limit of the HWI/ASR API; null or absent: off (the default). */
  readonly rateLimit?: RateLimit | null;
  /** Addresses verification answers Invalid for; default DEFAULT_UNDELIVERABLE_ADDRESSES. */
  readonly undeliverableAddresses?: readonly UndeliverableAddress[];
  /** The fulfilment simulator's settings (shipments opened by the API); default the lab's. */
  readonly fulfilment?: FulfilmentConfig;
}

/** What every route plugin receives as its options: the lab's services, nothing global. */
export interface ApiContext {
  readonly store: Store;
  readonly clock: Clock;
  readonly config: ApiConfig;
  /** The device types (hwi-device-types, activation names, spec 2.8). */
  readonly catalogue: Catalogue;
  /** The ASR supply types (asr/supply-types, hwi-device-types supply_types, spec 2.7). */
  readonly supplies: SupplyCatalogue;
  /** ASR supply requests: placing, listing, removing (spec 4.5). */
  readonly supplyRequests: SupplyRequests;
  /** Activation, update, views, properties, gateways, unlink, replacements, logs, orders. */
  readonly devices: DeviceServices;
  /** The webhook dispatcher's nudge; resends and test sends (issue 4 §1). */
  readonly webhooks: WebhookControl;
  /** Runs a dead letter through ingestion again (README "Dead letters"). */
  readonly replay: Replay;
  /** The live feed of /lab/v1/events/ and the dashboard (src/dashboard). */
  readonly feed: LabFeed;
  /** Told each username whose MQTT credential was issued again (ApiDeps). */
  readonly mqttCredentialIssued: (username: string) => void;
}

/**
 * One resource's routes (DESIGN.md "src/api"): a Fastify plugin registered under its scope's
 * prefix by buildApp, from the lists in routes/index.ts. Paths inside are relative to the scope
 * ("hwi-patients/", "supply-types/"), and end with a slash (spec: all paths do).
 */
export type RoutePlugin = FastifyPluginAsync<ApiContext, RawServerDefault, ZodTypeProvider>;

/**
 * The four scopes of the API and how each authenticates (auth.ts):
 * - hwi: /clients/:clientDomain/hwi/ — Api-Key of that client domain (spec 4, 5)
 * - asr: /clients/:clientDomain/asr/ — same, and the account's ASR module enabled (spec 4.5)
 * - v2:  /api/v2/hwi/ — Api-Key alone; the key's account (spec 4.4)
 * - lab: /lab/v1/ — the lab admin token (stands in for the vendor's dashboard)
 */
export type Scope = "hwi" | "asr" | "v2" | "lab";

export interface RouteTable {
  readonly hwi: readonly RoutePlugin[];
  readonly asr: readonly RoutePlugin[];
  readonly v2: readonly RoutePlugin[];
  readonly lab: readonly RoutePlugin[];
}

export interface ApiDeps {
  readonly store: Store;
  readonly clock: Clock;
  /** Request and error log; none when absent. */
  readonly logger?: Logger;
  readonly config: ApiConfig;
  /** Device catalogue; default the shipped profiles (Catalogue.load()). */
  readonly catalogue?: Catalogue;
  /**
   * ASR supply catalogue; default the shipped one (SupplyCatalogue.load()), its compatible
   * devices checked against `catalogue`.
   */
  readonly supplies?: SupplyCatalogue;
  /** Where the device services announce fulfilment events; default: nobody listens. */
  readonly events?: FulfilmentEventSink;
  /** Seed of the ids the device services draw (replacement hardware); default a fixed seed. */
  readonly rng?: Rng;
  /** The routes to serve; default API_ROUTES (routes/index.ts). */
  readonly routes?: RouteTable;
  /**
   * The webhook dispatcher's control (serve's); default: no dispatcher to nudge, and resends
   * and test sends through an HTTP sender the app closes with itself.
   */
  readonly webhooks?: WebhookControl;
  /**
   * Dead-letter replays: the running lab's ingestor (serve); default a MessageProcessor on
   * `store`, committing each replay in its own transaction.
   */
  readonly replay?: Replay;
  /**
   * The live feed (serve's, fed by its ingestor, dispatcher and device services); default one
   * fed by this app's own fulfilment events when `events` is not given, else by nothing.
   */
  readonly feed?: LabFeed;
  /**
   * Called once a username's MQTT credential is issued (serve: its embedded broker ends the
   * connections opened with the password replaced); default nothing.
   */
  readonly mqttCredentialIssued?: (username: string) => void;
}

/** Who a request authenticated as: set by the scope's auth hook before any handler runs. */
export interface ClientAuth {
  readonly account: AccountRow;
  readonly apiKey: ApiKeyRow;
}

declare module "fastify" {
  interface FastifyRequest {
    /** The API key's account and key, on hwi/asr/v2 routes; null elsewhere. */
    client: ClientAuth | null;
  }
}
