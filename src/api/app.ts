import Fastify, {
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifySchemaCompiler,
  LogController,
} from "fastify";
import { SupplyCatalogue } from "../asr/supply-catalogue.ts";
import { SupplyRequests } from "../asr/supply-requests.ts";
import { Catalogue } from "../catalogue/catalogue.ts";
import { DEFAULT_FULFILMENT_CONFIG } from "../config/fulfilment-config.ts";
import { RpmlabError } from "../core/errors.ts";
import { TypedEvents } from "../core/events.ts";
import { Rng } from "../core/rng.ts";
import { LabFeed } from "../dashboard/feed.ts";
import { registerDashboard } from "../dashboard/page-route.ts";
import type { FulfilmentEvents } from "../fulfilment/events.ts";
import { createDeviceServices } from "../fulfilment/services.ts";
import { MessageProcessor } from "../ingest/processor.ts";
import { replayWith } from "../ingest/replay.ts";
import { standaloneWebhookControl } from "../webhooks/control.ts";
import { authenticate } from "./auth.ts";
import { clientErrorAnswer, REQUEST_TIMEOUT_MS, registerCloseGrace } from "./connections.ts";
import { registerJsonOnly } from "./content-types.ts";
import { apiError, DRF, registerErrorHandler } from "./errors.ts";
import { frameworkError } from "./framework-errors.ts";
import { registerNotFound } from "./not-found.ts";
import { registerOpenApi } from "./openapi.ts";
import { type RateLimitCheck, registerRateLimit } from "./rate-limit.ts";
import { apiLogger } from "./request-log.ts";
import { KnownRoutes } from "./route-table.ts";
import { API_ROUTES } from "./routes/index.ts";
import type { ApiContext, ApiDeps, RouteTable, Scope } from "./types.ts";
import { validatorCompiler } from "./validation.ts";

/** Where each scope's routes live (spec: conventions, 4.4; the lab admin API). */
export const SCOPE_PREFIXES: Readonly<Record<Scope, string>> = {
  hwi: "/clients/:clientDomain/hwi",
  asr: "/clients/:clientDomain/asr",
  v2: "/api/v2/hwi",
  lab: "/lab/v1",
};

/** External ids and keys travel in paths; find-my-way's default limit (100) is too short. */
const MAX_PARAM_LENGTH = 1000;

/**
 * The HWI/ASR HTTP application (not listening: `rpmlab serve` listens, tests `inject()`).
 * Order of checks for a request, as the real service (Django, then DRF) makes them:
 * unknown path → 404, missing slash → 301 (not-found.ts); authentication → 401/403 (auth.ts);
 * rate limit → 429 (rate-limit.ts); content type → 415 and body → 400 (content-types.ts,
 * validation.ts); then the route. Errors of every kind are shaped in errors.ts.
 */
export function buildApp(deps: ApiDeps): FastifyInstance {
  if (deps.config.adminToken.trim() === "") {
    throw new RpmlabError("E_CONFIG_INVALID", "the lab admin token must not be empty", {
      field: "adminToken",
    });
  }
  let requests = 0;
  const app = Fastify({
    ...(deps.logger === undefined ? { logger: false } : { loggerInstance: apiLogger(deps.logger) }),
    // Per app, so ids restart with each lab and a test can predict them.
    genReqId: () => `req-${(++requests).toString(36)}`,
    logController: new LogController({ requestIdLogLabel: "request_id" }),
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: frameworkError,
    requestTimeout: REQUEST_TIMEOUT_MS,
    clientErrorHandler: clientErrorAnswer,
  });
  registerCloseGrace(app);
  app.setValidatorCompiler(validatorCompiler as FastifySchemaCompiler<unknown>);
  app.decorateRequest("client", null);
  registerErrorHandler(app);
  registerJsonOnly(app);

  const known = new KnownRoutes();
  app.addHook("onRoute", (route) => known.add(route.url, route.method, scopeOfUrl(route.url)));
  // Spec 7.3 asks clients to capture request details on a 500: every answer names its id.
  app.addHook("onSend", async (request, reply) => {
    reply.header("x-request-id", request.id);
  });

  registerOpenApi(app, deps.config);
  const ctx = apiContext(deps, app);
  const routes = deps.routes ?? API_ROUTES;
  // Set once the client scopes' limiter is registered (before the app is ready).
  let rateLimit: RateLimitCheck | undefined;
  app.register(async (clientApi) => {
    // One limiter for the three client scopes: a key's budget is shared across them.
    const limit = deps.config.rateLimit;
    if (limit !== undefined && limit !== null) {
      rateLimit = await registerRateLimit(clientApi, limit, deps.clock);
    }
    for (const scope of ["hwi", "asr", "v2"] as const) {
      clientApi.register(scopePlugin(scope, ctx, routes), { prefix: SCOPE_PREFIXES[scope] });
    }
  });
  app.register(scopePlugin("lab", ctx, routes), { prefix: SCOPE_PREFIXES.lab });
  registerDashboard(app);
  registerNotFound(app, known, {
    store: deps.store,
    adminToken: deps.config.adminToken,
    rateLimit: () => rateLimit,
  });
  return app;
}

/** The services every route plugin receives, built once per app. */
function apiContext(deps: ApiDeps, app: FastifyInstance): ApiContext {
  const catalogue = deps.catalogue ?? Catalogue.load();
  const supplies = deps.supplies ?? SupplyCatalogue.load(undefined, catalogue);
  let webhooks = deps.webhooks;
  if (webhooks === undefined) {
    const standalone = standaloneWebhookControl({
      store: deps.store,
      clock: deps.clock,
      rng: (deps.rng ?? new Rng("rpmlab-api")).fork("webhooks"),
    });
    app.addHook("onClose", () => standalone.close());
    webhooks = standalone;
  }
  const own = deps.events === undefined ? new TypedEvents<FulfilmentEvents>() : undefined;
  const events = deps.events ?? own!;
  const feed = deps.feed ?? new LabFeed({ store: deps.store, clock: deps.clock, catalogue });
  if (deps.feed === undefined && own !== undefined) feed.attachFulfilment(own);
  const devices = createDeviceServices({
    store: deps.store,
    catalogue,
    clock: deps.clock,
    events,
    rng: deps.rng ?? new Rng("rpmlab-api"),
    ...(deps.config.undeliverableAddresses === undefined
      ? {}
      : { undeliverableAddresses: deps.config.undeliverableAddresses }),
    ...(deps.config.fulfilment === undefined ? {} : { fulfilment: deps.config.fulfilment }),
  });
  return {
    store: deps.store,
    clock: deps.clock,
    config: deps.config,
    catalogue,
    supplies,
    devices,
    supplyRequests: new SupplyRequests({
      store: deps.store,
      clock: deps.clock,
      supplies,
      catalogue,
      events,
      fulfilment: deps.config.fulfilment ?? DEFAULT_FULFILMENT_CONFIG,
    }),
    webhooks,
    // Without a running lab's ingestor, a replay commits through a processor of its own.
    replay:
      deps.replay ?? replayWith(new MessageProcessor({ store: deps.store, catalogue }), deps.clock),
    feed,
    mqttCredentialIssued: deps.mqttCredentialIssued ?? (() => {}),
  };
}

/** A scope: its authentication hook, then its route plugins. */
function scopePlugin(scope: Scope, ctx: ApiContext, routes: RouteTable): FastifyPluginAsync {
  const auth = { store: ctx.store, adminToken: ctx.config.adminToken };
  return async (instance) => {
    instance.addHook("onRequest", async (request) => {
      const params = request.params as { clientDomain?: string };
      await authenticate(request, scope, auth, params.clientDomain);
      // Django's fields refuse NUL ("Null characters are not allowed."); PostgreSQL text cannot
      // hold one, so a %00 in a path id or a query value must never reach a query.
      if (/%00/.test(request.raw.url ?? "")) throw apiError.badRequest(DRF.nullInUrl);
    });
    for (const plugin of routes[scope])
      instance.register(plugin as FastifyPluginAsync<ApiContext>, ctx);
  };
}

function scopeOfUrl(url: string): Scope | null {
  for (const [scope, prefix] of Object.entries(SCOPE_PREFIXES)) {
    if (url.startsWith(`${prefix}/`)) return scope as Scope;
  }
  return null;
}
