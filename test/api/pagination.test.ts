import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { accountOf } from "../../src/api/auth.ts";
import {
  FLAT_LIST_LIMIT,
  listMode,
  listSchemas,
  paginate,
  paginationQuery,
  sendList,
} from "../../src/api/pagination.ts";
import { PATIENT_JSON_SCHEMA, patientJson } from "../../src/api/schemas/patient.ts";
import type { RoutePlugin } from "../../src/api/types.ts";
import { isRpmlabError } from "../../src/core/errors.ts";
import { hwi, type Lab, makeLab, send } from "./helpers.ts";

/** A list that is flat without page, as hwi-devices will be (spec 8 rule 1). */
const LIST = listSchemas(PATIENT_JSON_SCHEMA);
const flatList: RoutePlugin = async (app, ctx) => {
  app.get(
    "/flat-patients/",
    { schema: { querystring: z.object(paginationQuery), response: { 200: LIST.either } } },
    async (request, reply) => {
      const accountId = accountOf(request).id;
      const body = await paginate(
        request,
        listMode(request.query),
        (options) => ctx.store.patients.list(accountId, options),
        patientJson,
        ctx.config.baseUrl,
      );
      return sendList(reply, body, LIST);
    },
  );
};

let lab: Lab;
afterEach(() => lab.close());

async function seed(n: number): Promise<void> {
  for (let i = 1; i <= n; i++) {
    await lab.store.patients.create(lab.dev.account.id, {
      externalId: `P-${String(i).padStart(4, "0")}`,
    });
  }
}

const get = (path: string, headers: Record<string, string> = {}) =>
  lab.app.inject({
    method: "GET",
    url: hwi(lab.dev, path),
    headers: { authorization: `Api-Key ${lab.dev.key}`, ...headers },
  });

const ids = (body: { results: { external_id: string }[] }) =>
  body.results.map((r) => r.external_id);

/** Spec 2.6, 8 (limits and rules) and DRF's PageNumberPagination. */
describe("pagination", () => {
  it("page_size defaults to 100; next/previous are absolute URLs keeping the query", async () => {
    lab = await makeLab();
    await seed(250);
    const first = (await get("hwi-patients/?ordering=x&page=1")).json();
    expect(first.count).toBe(250);
    expect(first.results).toHaveLength(100);
    expect(first.previous).toBeNull();
    expect(first.next).toBe(
      "http://localhost/clients/acme-dev/hwi/hwi-patients/?ordering=x&page=2",
    );
    const second = (await get("hwi-patients/?ordering=x&page=2")).json();
    expect(ids(second)[0]).toBe("P-0101");
    expect(second.previous).toBe(
      "http://localhost/clients/acme-dev/hwi/hwi-patients/?ordering=x&page=1",
    );
    const third = (await get("hwi-patients/?ordering=x&page=3")).json();
    expect(third.results).toHaveLength(50);
    expect(third.next).toBeNull();
  });

  it("following next from the first page visits every item once", async () => {
    lab = await makeLab();
    await seed(23);
    const seen: string[] = [];
    let url: string | null = `http://localhost${hwi(lab.dev, "hwi-patients/?page_size=5")}`;
    while (url !== null) {
      const { pathname, search } = new URL(url);
      const body = (
        await lab.app.inject({
          method: "GET",
          url: pathname + search,
          headers: { authorization: `Api-Key ${lab.dev.key}` },
        })
      ).json();
      seen.push(...ids(body));
      url = body.next;
    }
    expect(seen).toHaveLength(23);
    expect(new Set(seen).size).toBe(23);
  });

  it("page_size is clamped to 1000; values that are not positive integers mean 100 (DRF)", async () => {
    lab = await makeLab();
    await seed(1001);
    const big = (await get("hwi-patients/?page_size=5000")).json();
    expect(big.results).toHaveLength(1000);
    expect(big.next).toContain("page=2");
    for (const size of ["0", "-5", "abc", "1.5", ""]) {
      expect((await get(`hwi-patients/?page_size=${size}`)).json().results, size).toHaveLength(100);
    }
  });

  it("page must be a positive integer or last: 400 keyed page", async () => {
    lab = await makeLab();
    await seed(3);
    const abc = await get("hwi-patients/?page=abc");
    expect(abc.statusCode).toBe(400);
    expect(abc.json()).toEqual({ page: ["A valid integer is required."] });
    for (const page of ["0", "-1"]) {
      const res = await get(`hwi-patients/?page=${page}`);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ page: ["Ensure this value is greater than or equal to 1."] });
    }
    const last = (await get("hwi-patients/?page=last&page_size=2")).json();
    expect(ids(last)).toEqual(["P-0003"]);
    expect(last.previous).toContain("page=1");
  });

  it("a page past the end is 404 Invalid page; page 1 of nothing is an empty envelope", async () => {
    lab = await makeLab();
    expect((await get("hwi-patients/")).json()).toEqual({
      count: 0,
      next: null,
      previous: null,
      results: [],
    });
    await seed(3);
    const past = await get("hwi-patients/?page=2");
    expect(past.statusCode).toBe(404);
    expect(past.json()).toEqual({ detail: "Invalid page." });
    expect((await get("hwi-patients/?page=99999999999999999999")).statusCode).toBe(404);
  });

  it("repeated parameters: the last one counts (Django's QueryDict.get)", async () => {
    lab = await makeLab();
    await seed(3);
    const res = await get("hwi-patients/?page_size=1&page_size=2&page=9&page=2");
    expect(ids(res.json())).toEqual(["P-0003"]);
  });

  it("URLs follow X-Forwarded-Proto and Host, or the configured base URL", async () => {
    lab = await makeLab();
    await seed(3);
    const proxied = (
      await get("hwi-patients/?page_size=1", {
        host: "lab.example:8443",
        "x-forwarded-proto": "https",
      })
    ).json();
    expect(proxied.next).toBe(
      "https://lab.example:8443/clients/acme-dev/hwi/hwi-patients/?page_size=1&page=2",
    );
    await lab.close();
    lab = await makeLab({ config: { baseUrl: "https://rpm.example/lab/" } });
    await seed(3);
    const based = (await get("hwi-patients/?page_size=1")).json();
    expect(based.next).toBe(
      "https://rpm.example/lab/clients/acme-dev/hwi/hwi-patients/?page_size=1&page=2",
    );
  });

  it("without page, other lists are a flat array truncated at 1000 (spec 8)", async () => {
    lab = await makeLab({ extraRoutes: { hwi: [flatList] } });
    await seed(1001);
    const flat = await send(
      lab.app,
      "GET",
      hwi(lab.dev, "flat-patients/?page_size=10"),
      lab.dev.key,
    );
    expect(flat.statusCode).toBe(200);
    expect(flat.headers["content-type"]).toBe("application/json; charset=utf-8");
    const rows = flat.json();
    expect(Array.isArray(rows)).toBe(true);
    expect(rows).toHaveLength(FLAT_LIST_LIMIT);
    expect(Object.keys(rows[0]).length).toBe(15);
    const paged = (
      await send(lab.app, "GET", hwi(lab.dev, "flat-patients/?page=2&page_size=10"), lab.dev.key)
    ).json();
    expect(paged.count).toBe(1001);
    expect(ids(paged)[0]).toBe("P-0011");
  });
});

describe("listMode", () => {
  const q = (query: Record<string, string>) => listMode(query);
  const fail = (query: Record<string, string>) => {
    try {
      q(query);
    } catch (error) {
      return isRpmlabError(error, "E_API_VALIDATION") ? error.details.fields : error;
    }
    return undefined;
  };

  it("flat without page, unless always paginated", () => {
    expect(q({})).toEqual({ kind: "flat", limit: 1000 });
    expect(listMode({}, { alwaysPaginated: true })).toEqual({
      kind: "page",
      page: 1,
      pageSize: 100,
    });
    expect(q({ page: "3", page_size: "7" })).toEqual({ kind: "page", page: 3, pageSize: 7 });
    expect(q({ page: "last" })).toEqual({ kind: "page", page: "last", pageSize: 100 });
    expect(fail({ page: "2.5" })).toEqual({ page: ["A valid integer is required."] });
  });
});
