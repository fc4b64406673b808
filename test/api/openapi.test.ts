import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, type Lab, makeLab } from "./helpers.ts";

type Doc = {
  openapi: string;
  info: { title: string; version: string; description: string };
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown> };
};
type Operation = {
  operationId?: string;
  parameters?: { in: string; name: string; required?: boolean }[];
  requestBody?: { required?: boolean; content: Record<string, { schema: unknown }> };
  responses: Record<
    string,
    {
      description: string;
      content?: Record<string, { schema: unknown }>;
      headers?: Record<string, unknown>;
    }
  >;
  security?: unknown[];
};

type Schema = { properties: Record<string, { pattern?: string }> };

const PATIENTS = "/clients/{clientDomain}/hwi/hwi-patients/";
const PATIENT = "/clients/{clientDomain}/hwi/hwi-patients/{externalId}/";

/** Issue: OpenAPI 3.1 generated from the route schemas, served with an explorer at /docs. */
describe("OpenAPI document", () => {
  let lab: Lab;
  let doc: Doc;
  /** Every route the app serves, as Fastify registered it (collected before the app is ready). */
  const served: { method: string; url: string; hidden: boolean }[] = [];
  beforeAll(async () => {
    lab = await makeLab();
    lab.app.addHook("onRoute", (route) => {
      for (const method of [route.method].flat()) {
        served.push({ method, url: route.url, hidden: route.schema?.hide === true });
      }
    });
    const res = await lab.app.inject({ method: "GET", url: "/docs/json" });
    expect(res.statusCode).toBe(200);
    doc = res.json();
  });
  afterAll(() => lab.close());

  it("is OpenAPI 3.1 with the decisions in its description", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe("v1");
    expect(doc.info.description).toContain("Duplicate external_id");
    expect(doc.info.description).toContain("301");
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(["AdminToken", "ApiKey"]);
  });

  it("lists the patient paths with every method of spec 4.1", () => {
    expect(Object.keys(doc.paths[PATIENTS] ?? {}).sort()).toEqual(["get", "post"]);
    expect(Object.keys(doc.paths[PATIENT] ?? {}).sort()).toEqual(["delete", "get", "patch", "put"]);
    const post = doc.paths[PATIENTS]!.post!;
    expect(post.responses["201"]?.content?.["application/json"]).toBeDefined();
    expect(post.responses["400"]?.description).toContain("keyed by field");
    expect(post.requestBody?.content["application/json"]?.schema).toMatchObject({
      type: "object",
      required: ["external_id"],
    });
    expect(post.security).toEqual([{ ApiKey: [] }]);
    expect(doc.paths[PATIENT]!.delete!.responses["204"]).toBeDefined();
  });

  it("lists every path of the API with its methods (spec 4.1-4.5; wire-formats extras)", () => {
    const hwi = "/clients/{clientDomain}/hwi/";
    const asr = "/clients/{clientDomain}/asr/";
    const expected: Record<string, string[]> = {
      [`${hwi}hwi-patients/`]: ["get", "post"],
      [`${hwi}hwi-patients/{externalId}/`]: ["delete", "get", "patch", "put"],
      [`${hwi}hwi-devices/`]: ["get", "post"],
      [`${hwi}hwi-devices/{id}/`]: ["get", "put"],
      [`${hwi}hwi-devices/{id}/properties/`]: ["get", "post", "put"],
      [`${hwi}hwi-devices/{id}/properties/{key}/`]: ["delete", "get"],
      [`${hwi}hwi-devices/{id}/measurements/`]: ["get"],
      [`${hwi}hwi-patient-measurements/`]: ["get"],
      [`${hwi}hwi-device-types/`]: ["get"],
      [`${hwi}hwi-gateways/`]: ["get"],
      [`${hwi}gateway-info/{gatewayUuid}/`]: ["get"],
      [`${hwi}unlink-gateway/{id}/`]: ["get", "post"],
      [`${hwi}hwi-hardware-uuid-logs/`]: ["get"],
      [`${hwi}hwi-replacements/`]: ["get", "post"],
      [`${hwi}hwi-replacements/{id}/`]: ["get"],
      [`${hwi}hwi-shipments/{id}/`]: ["get"],
      [`${hwi}patients/{externalId}/measurements/`]: ["get"],
      [`${hwi}webhooks/`]: ["get", "post"],
      [`${hwi}webhooks/{id}/`]: ["delete", "get", "patch", "put"],
      [`${asr}supply-types/`]: ["get"],
      [`${asr}asr-supply-types/`]: ["get"],
      [`${asr}supply-requests/`]: ["delete", "get", "post"],
      [`${asr}supply-requests/{id}/`]: ["delete", "get"],
      [`${asr}glucometer_supplies/{hardware_uuid}/`]: ["get", "put"],
      "/api/v2/hwi/patient-measurements/": ["get"],
      "/api/v2/hwi/device-measurements/": ["get"],
    };
    for (const [path, methods] of Object.entries(expected)) {
      expect(Object.keys(doc.paths[path] ?? {}).sort(), path).toEqual(methods);
    }
    const clientPaths = Object.keys(doc.paths).filter((p) => !p.startsWith("/lab/"));
    expect(clientPaths.sort()).toEqual(Object.keys(expected).sort());
  });

  it("documents every route the app serves, and none it does not", () => {
    const path = (url: string) => url.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, "{$1}");
    const documented = new Set(
      Object.entries(doc.paths).flatMap(([p, ops]) =>
        Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`),
      ),
    );
    const visible = served.filter((r) => !r.hidden);
    // The explorer and the dashboard page are hidden on purpose; the API is all there.
    expect(visible.some((r) => r.url.startsWith("/lab/v1/"))).toBe(true);
    for (const { method, url } of visible) {
      const operation = `${method} ${path(url)}`;
      // The HEAD Fastify derives from a GET answers the GET's headers: the description says
      // so once, rather than one more operation per path.
      if (method === "HEAD" && !documented.has(operation)) {
        expect(documented, operation).toContain(`GET ${path(url)}`);
        continue;
      }
      expect(documented, operation).toContain(operation);
    }
    const servedOperations = new Set(visible.map((r) => `${r.method} ${path(r.url)}`));
    for (const operation of documented) expect(servedOperations, operation).toContain(operation);
    expect(doc.info.description).toContain("**HEAD**");
  });

  it("documents HEAD /lab/v1/events/, which opens no stream, as its own operation", async () => {
    const head = doc.paths["/lab/v1/events/"]!.head as Operation & { description: string };
    expect(head).toBeDefined();
    expect(head.operationId).toBe("headLabV1Events");
    expect(head.security).toEqual([{ AdminToken: [] }]);
    expect(head.description).toContain("no stream");
    // A HEAD response has no body; its headers are what it answers.
    expect(head.responses["200"]!.content).toBeUndefined();
    expect(head.responses["200"]!.headers).toHaveProperty("Content-Type");
    // 400 and 500 as on every route: a NUL (%00) in the query, a failure.
    expect(Object.keys(head.responses).sort()).toEqual(["200", "400", "401", "403", "500"]);
    // And it answers as documented.
    const res = await lab.app.inject({
      method: "HEAD",
      url: "/lab/v1/events/",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
    expect(res.body).toBe("");
    const refused = await lab.app.inject({ method: "HEAD", url: "/lab/v1/events/" });
    expect(refused.statusCode).toBe(401);
  });

  it("states the decisions the spec leaves open, globally and per route", () => {
    const description = doc.info.description;
    for (const decision of ["Measurements", "hwi_device_id", "first 1000", "Unknown Gateway ID"]) {
      expect(description).toContain(decision);
    }
    const measurements = doc.paths["/clients/{clientDomain}/hwi/hwi-devices/{id}/measurements/"]!
      .get as Operation & { description: string };
    expect(measurements.description).toContain("the last 30 days");
    expect(measurements.description).toContain("the oldest");
    const post = doc.paths["/clients/{clientDomain}/hwi/hwi-devices/"]!.post!;
    expect(post.requestBody?.content["application/json"]?.schema).toMatchObject({
      type: "object",
      required: ["device"],
    });
  });

  it("declares every path parameter of every path, as OpenAPI requires", () => {
    for (const [path, operations] of Object.entries(doc.paths)) {
      const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      for (const [method, op] of Object.entries(operations)) {
        const declared = (op.parameters ?? []).filter((p) => p.in === "path");
        expect(declared.map((p) => p.name).sort(), `${method} ${path}`).toEqual([...names].sort());
        expect(declared.every((p) => p.required === true)).toBe(true);
      }
    }
  });

  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ path, method, op })),
    );

  it("names every operation with a unique operationId, for generated clients' methods", () => {
    const ids = operations().map(({ op }) => op.operationId);
    expect(ids.every((id) => typeof id === "string" && /^[a-z]+[A-Za-z0-9]*$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(doc.paths[PATIENT]!.get!.operationId).toBe("getHwiHwiPatientsByExternalId");
  });

  it("documents what a client must send and what it may get back beyond the body", () => {
    // Required query parameters are required.
    const v2 = doc.paths["/api/v2/hwi/patient-measurements/"]!.get!;
    expect(v2.parameters!.find((p) => p.name === "patient_id")).toMatchObject({ required: true });
    // GET and DELETE of supply-requests/ take their own parameters.
    const supply = doc.paths["/clients/{clientDomain}/asr/supply-requests/"]!;
    const names = (op: Operation) => (op.parameters ?? []).map((p) => p.name).sort();
    expect(names(supply.get!)).toEqual([
      "clientDomain",
      "fulfilled",
      "page",
      "page_size",
      "search",
    ]);
    expect(names(supply.delete!)).toEqual(["clientDomain", "id"]);
    // …or the id in a JSON body.
    expect(supply.delete!.requestBody?.content["application/json"]?.schema).toMatchObject({
      type: "object",
      properties: { id: { type: "string" } },
    });
    // Every operation with a body may answer 413 and 415; a 429 says Retry-After.
    for (const { path, method, op } of operations()) {
      if (op.requestBody !== undefined) {
        expect(Object.keys(op.responses), `${method} ${path}`).toEqual(
          expect.arrayContaining(["413", "415"]),
        );
      }
      if (op.responses["429"] !== undefined) {
        expect(op.responses["429"].headers, `${method} ${path}`).toHaveProperty("Retry-After");
      }
    }
    // Times are date-times; the feed is an event stream.
    const order = doc.paths["/clients/{clientDomain}/asr/supply-requests/{id}/"]!.get!;
    expect(JSON.stringify(order.responses["200"])).toMatch(
      /"created_on":\{"type":"string","format":"date-time"/,
    );
    const events = doc.paths["/lab/v1/events/"]!.get!.responses;
    expect(Object.keys(events["200"]!.content!)).toEqual(["text/event-stream"]);
    expect(Object.keys(events).sort()).toEqual(["200", "400", "401", "403", "500"]);
  });

  it("marks a body required only where leaving it out is refused, and documents the client domain's pattern", async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const accounts = doc.paths["/lab/v1/accounts/"]!.post!;
    expect(accounts.requestBody?.required).toBe(true);
    const domain = (accounts.requestBody!.content["application/json"]!.schema as Schema).properties
      .client_domain!;
    const pattern = new RegExp(domain.pattern!);
    for (const name of ["clinic-9", "a.b", "-clinic", "clinic-", "a_b"]) {
      const res = await lab.app.inject({
        method: "POST",
        url: "/lab/v1/accounts/",
        headers: admin,
        payload: { client_domain: name },
      });
      // The document's pattern refuses exactly what the API refuses.
      expect(res.statusCode === 201, name).toBe(pattern.test(name));
    }
    const keys = doc.paths["/lab/v1/accounts/{clientDomain}/keys/"]!.post!;
    expect(keys.requestBody?.required).toBe(false);
    const created = await lab.app.inject({
      method: "POST",
      url: "/lab/v1/accounts/clinic-9/keys/",
      headers: admin,
    });
    expect(created.statusCode).toBe(201);
  });

  it("hides the explorer's own routes and shows the lab admin API", () => {
    expect(Object.keys(doc.paths).some((p) => p.startsWith("/docs"))).toBe(false);
    expect(doc.paths["/lab/v1/accounts/"]).toBeDefined();
  });

  it("serves the explorer at /docs", async () => {
    const res = await lab.app.inject({ method: "GET", url: "/docs" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toContain("text/html");
    expect(res.body).toContain("Swagger UI");
  });
});
