/**
 * The baseline of measurements-page.ts: what a minimal hand-written service answering GET
 * hwi-devices/{id}/measurements/?page=N does, with the store's count and page statements
 * (prepared once; the page reads `select *`, as a first version would, where the store reads
 * only the columns it renders) and JSON.stringify (Fastify's default without a response
 * schema). Not a benchmark itself (run.ts skips files starting with "_").
 */
import { createHash } from "node:crypto";
import Database from "better-sqlite3";
import Fastify, { type FastifyInstance } from "fastify";
import { toIsoMicros } from "../../src/core/time.ts";

/**
 * The naive handler: what a hand-written service answering the same request does, with the same
 * SQL the store runs and JSON.stringify (Fastify's default without a response schema).
 */
export function naiveMeasurementsServer(file: string): FastifyInstance {
  const db = new Database(file, { readonly: true });
  db.pragma("cache_size = -65536");
  const keyQuery = db.prepare(
    `select accounts.id, accounts.client_domain_lc from api_keys
     inner join accounts on accounts.id = api_keys.account_id
     where api_keys.key_hash = ? and api_keys.revoked_at is null`,
  );
  const deviceQuery = db.prepare("select id from devices where account_id = ? and id = ?");
  const countQuery = db.prepare(
    `select count(*) as "n" from "measurements" where "account_id" = ? and "device_id" = ?`,
  );
  const pageQuery = db.prepare(
    `select * from "measurements" where "account_id" = ? and "device_id" = ?
     order by "timestamp" asc, "id" asc limit ? offset ?`,
  );
  const app = Fastify({ logger: false });
  app.get<{
    Params: { domain: string; id: string };
    Querystring: { page?: string; page_size?: string };
  }>("/clients/:domain/hwi/hwi-devices/:id/measurements/", async (request, reply) => {
    const header = request.headers.authorization ?? "";
    if (!header.startsWith("Api-Key ")) return reply.code(401).send({ detail: "no key" });
    const hash = createHash("sha256").update(header.slice(8)).digest("hex");
    const account = keyQuery.get(hash) as { id: string; client_domain_lc: string } | undefined;
    if (account === undefined) return reply.code(401).send({ detail: "bad key" });
    if (account.client_domain_lc !== request.params.domain.toLowerCase()) {
      return reply.code(403).send({ detail: "wrong domain" });
    }
    if (deviceQuery.get(account.id, request.params.id) === undefined) {
      return reply.code(404).send({ detail: "No Device matches the given query." });
    }
    const page = Number(request.query.page ?? 1);
    const size = Math.min(Number(request.query.page_size ?? 100), 1000);
    const { n } = countQuery.get(account.id, request.params.id) as { n: number };
    const rows = pageQuery.all(account.id, request.params.id, size, (page - 1) * size) as Row[];
    const url = new URL(`http://${request.headers.host}${request.url}`);
    const link = (p: number) => {
      url.searchParams.set("page", String(p));
      return url.toString();
    };
    return {
      count: n,
      next: page * size < n ? link(page + 1) : null,
      previous: page > 1 ? link(page - 1) : null,
      results: rows.map((r) => ({
        id: r.id,
        metric_type: r.metric,
        metric: r.metric,
        device_name: r.device_name,
        hwi_device_id: r.device_id,
        patient_id: r.patient_external_id,
        hardware_uuid: r.hardware_uuid,
        sensor_code: r.sensor_code,
        value_1: r.value_1.toFixed(2),
        value_2: r.value_2 === null ? "0.00" : r.value_2.toFixed(2),
        created: toIsoMicros(r.created),
        timestamp: toIsoMicros(r.timestamp),
        timezone_offset: r.timezone_offset,
        estimated_timestamp: r.estimated_timestamp === 1,
        filter_params: r.filter_params === null ? null : JSON.parse(r.filter_params),
      })),
    };
  });
  app.addHook("onClose", async () => db.close());
  return app;
}

interface Row {
  id: number;
  device_id: string;
  device_name: string;
  patient_external_id: string;
  hardware_uuid: string;
  sensor_code: string;
  metric: string;
  value_1: number;
  value_2: number | null;
  timestamp: number;
  timezone_offset: number;
  estimated_timestamp: number;
  filter_params: string | null;
  created: number;
}
