import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Lab, makeLab } from "./helpers.ts";

type Doc = {
  openapi: string;
  info: { title: string; version: string; description: string };
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown> };
};
type Operation = {
  parameters?: { in: string; name: string; required?: boolean }[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: unknown }> }>;
  security?: unknown[];
};

const PATIENTS = "/clients/{clientDomain}/hwi/hwi-patients/";
const PATIENT = "/clients/{clientDomain}/hwi/hwi-patients/{externalId}/";

/** Issue: OpenAPI 3.1 generated from the route schemas, served with an explorer at /docs. */
describe("OpenAPI document", () => {
  let lab: Lab;
  let doc: Doc;
  beforeAll(async () => {
    lab = await makeLab();
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
