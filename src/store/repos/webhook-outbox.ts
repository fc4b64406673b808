import type { Selectable } from "kysely";
import { type Ctx, invalid, templated, templatedIn } from "../context.ts";
import { readNum, writeJson } from "../dialect.ts";
import { param } from "../query-templates.ts";
import type { WebhookOutboxTable } from "../schema-webhooks.ts";
import type { WebhookOutboxRepo } from "../store-webhooks.ts";
import { type MeasurementRow, WEBHOOK_EVENTS, type WebhookEvent } from "../types-ingest.ts";
import type { IdRange, OutboxEntry } from "../types-webhooks.ts";
import { toMeasurementRow } from "./measurement-rows.ts";

interface Payload {
  readonly ranges?: readonly IdRange[];
  readonly body?: unknown;
  readonly hwi_device_id?: string | null;
  readonly patient_id?: string | null;
}

const RECORD_COLUMNS = [
  "id",
  "account_id",
  "device_id",
  "device_name",
  "patient_external_id",
  "source",
  "hardware_uuid",
  "sensor_code",
  "sensor_id",
  "metric",
  "value_1",
  "value_2",
  "timestamp",
  "timezone_offset",
  "estimated_timestamp",
  "filter_params",
  "measurement_index",
  "device_log_index",
  "dedupe_index",
  "created",
] as const;

function toEntry(ctx: Ctx, r: Selectable<WebhookOutboxTable>): OutboxEntry {
  const p = ctx.d.readJson(r.payload) as Payload;
  return {
    id: readNum(r.id),
    accountId: r.account_id,
    event: r.event as WebhookEvent,
    ranges: p.ranges ?? null,
    body: p.body ?? null,
    hwiDeviceId: p.hwi_device_id ?? null,
    patientId: p.patient_id ?? null,
    created: readNum(r.created),
  };
}

/**
 * The transactional outbox (issue 4 §1, "none is lost"): `add` runs in the transaction of the
 * change, `take` and `delete` in the dispatcher's transaction that creates the deliveries, so an
 * event becomes deliveries exactly once. Rows are taken and deleted, never read past by an id
 * cursor: PostgreSQL commits sequence values out of order.
 */
export function webhookOutboxRepo(ctx: Ctx): WebhookOutboxRepo {
  const { db, d } = ctx;
  return {
    async add(entry) {
      if (!(WEBHOOK_EVENTS as readonly string[]).includes(entry.event)) {
        throw invalid(`event must be one of ${WEBHOOK_EVENTS.join(", ")}`, { field: "event" });
      }
      const payload: Payload =
        entry.ranges === undefined
          ? {
              body: entry.body ?? null,
              hwi_device_id: entry.hwiDeviceId ?? null,
              patient_id: entry.patientId ?? null,
            }
          : { ranges: entry.ranges };
      await templated(
        ctx,
        "webhookOutbox.add",
        () =>
          db.insertInto("webhook_outbox").values({
            account_id: param("accountId"),
            event: param("event"),
            payload: param("payload"),
            created: param("created"),
          }),
        {
          accountId: entry.accountId,
          event: entry.event,
          payload: writeJson(payload),
          created: ctx.clock.now(),
        },
      );
    },
    async take(limit) {
      const rows = await templated(
        ctx,
        "webhookOutbox.take",
        () => {
          const q = db
            .selectFrom("webhook_outbox")
            .selectAll()
            .orderBy("id")
            .limit(param<number>("limit"));
          // Two dispatchers on one PostgreSQL database each take rows the other has not locked.
          return d.kind === "postgres" ? q.forUpdate().skipLocked() : q;
        },
        { limit },
      );
      return rows.map((r) => toEntry(ctx, r));
    },
    async delete(ids) {
      await templatedIn(ctx, "webhookOutbox.delete", ids, (list) =>
        db.deleteFrom("webhook_outbox").where("id", "in", list),
      );
    },
    async count() {
      const [row] = await templated(
        ctx,
        "webhookOutbox.count",
        () => db.selectFrom("webhook_outbox").select((eb) => eb.fn.countAll().as("n")),
        {},
      );
      return readNum(row?.n ?? 0);
    },
    async measurements(accountId, ranges) {
      const out: MeasurementRow[] = [];
      for (const [first, last] of ranges) {
        // By id alone (the primary key); the account is checked here: with it in the query,
        // SQLite preferred an account index and read every row of the account.
        const rows = await templated(
          ctx,
          "webhookOutbox.measurements",
          () =>
            db
              .selectFrom("measurements")
              // What a webhook record shows: not the raw bytes kept for audit.
              .select(RECORD_COLUMNS)
              .where("id", ">=", param<number>("first"))
              .where("id", "<=", param<number>("last"))
              .orderBy("id"),
          { first, last },
        );
        for (const r of rows) {
          if (r.account_id !== accountId) continue;
          out.push(toMeasurementRow(ctx, r));
        }
      }
      return out;
    },
    async devicesNow(deviceIds, routeKey) {
      const rows = await templatedIn(
        ctx,
        "webhookOutbox.devicesNow",
        deviceIds,
        (list) =>
          db
            .selectFrom("devices")
            .leftJoin("device_properties", (join) =>
              join
                .onRef("device_properties.device_id", "=", "devices.id")
                .on("device_properties.key", "=", param<string>("routeKey")),
            )
            .select(["devices.id", "devices.hardware_uuid", "device_properties.value"])
            .where("devices.id", "in", list),
        { routeKey },
      );
      return new Map(
        rows.map((r) => [r.id, { hardwareUuid: r.hardware_uuid, route: r.value ?? undefined }]),
      );
    },
  };
}
