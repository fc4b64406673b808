import type { Selectable } from "kysely";
import { type Ctx, invalid, notFound, templated, templatedIn } from "../context.ts";
import { readBool, readNum } from "../dialect.ts";
import { param } from "../query-templates.ts";
import type { WebhooksTable } from "../schema-webhooks.ts";
import type { WebhooksRepo } from "../store-webhooks.ts";
import { WEBHOOK_EVENTS, type WebhookEvent, type WebhookRow } from "../types-ingest.ts";

function toWebhookRow(r: Selectable<WebhooksTable>): WebhookRow {
  return {
    id: r.id,
    accountId: r.account_id,
    endpoint: r.endpoint,
    authHeader: r.auth_header,
    authKey: r.auth_key,
    event: r.event as WebhookEvent,
    postAsArray: readBool(r.post_as_array),
    enabledByDefault: readBool(r.enabled_by_default),
    signingSecret: r.signing_secret,
    created: readNum(r.created),
    modified: readNum(r.modified),
  };
}

function checkEvent(event: string | undefined): void {
  if (event !== undefined && !(WEBHOOK_EVENTS as readonly string[]).includes(event)) {
    throw invalid(`event must be one of ${WEBHOOK_EVENTS.join(", ")}`, {
      field: "event",
      value: event,
    });
  }
}

/** The webhook registry (wire-formats "Webhook registry"; spec 6.3 enabled_by_default). */
export function webhooksRepo(ctx: Ctx): WebhooksRepo {
  const { db, d } = ctx;
  return {
    async create(accountId, input) {
      checkEvent(input.event);
      const now = ctx.clock.now();
      const r = await db
        .insertInto("webhooks")
        .values({
          id: input.id ?? ctx.ids.uuid(),
          account_id: accountId,
          endpoint: input.endpoint,
          auth_header: input.authHeader ?? null,
          auth_key: input.authKey ?? null,
          event: input.event,
          post_as_array: d.toBool(input.postAsArray ?? false),
          enabled_by_default: d.toBool(input.enabledByDefault ?? true),
          signing_secret: input.signingSecret ?? null,
          created: now,
          modified: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toWebhookRow(r);
    },
    async get(accountId, id) {
      const r = await db
        .selectFrom("webhooks")
        .selectAll()
        .where("account_id", "=", accountId)
        .where("id", "=", id)
        .executeTakeFirst();
      return r === undefined ? null : toWebhookRow(r);
    },
    async getMany(ids) {
      const rows = await templatedIn(ctx, "webhooks.byIds", ids, (list) =>
        db.selectFrom("webhooks").selectAll().where("id", "in", list),
      );
      return rows.map(toWebhookRow);
    },
    async list(accountId, filter) {
      const event = filter?.event;
      // Outbox expansion lists an account's webhooks for every entry (expand.ts).
      const rows = await templated(
        ctx,
        `webhooks.list${event === undefined ? "" : " event"}`,
        () => {
          const q = db
            .selectFrom("webhooks")
            .selectAll()
            .where("account_id", "=", param<string>("accountId"));
          return (event === undefined ? q : q.where("event", "=", param<string>("event")))
            .orderBy("created")
            .orderBy("id");
        },
        { accountId, event },
      );
      return rows.map(toWebhookRow);
    },
    async update(accountId, id, patch) {
      checkEvent(patch.event);
      const r = await db
        .updateTable("webhooks")
        .set({
          ...(patch.endpoint === undefined ? {} : { endpoint: patch.endpoint }),
          ...(patch.authHeader === undefined ? {} : { auth_header: patch.authHeader }),
          ...(patch.authKey === undefined ? {} : { auth_key: patch.authKey }),
          ...(patch.event === undefined ? {} : { event: patch.event }),
          ...(patch.postAsArray === undefined
            ? {}
            : { post_as_array: d.toBool(patch.postAsArray) }),
          ...(patch.enabledByDefault === undefined
            ? {}
            : { enabled_by_default: d.toBool(patch.enabledByDefault) }),
          ...(patch.signingSecret === undefined ? {} : { signing_secret: patch.signingSecret }),
          modified: ctx.clock.now(),
        })
        .where("account_id", "=", accountId)
        .where("id", "=", id)
        .returningAll()
        .executeTakeFirst();
      if (r === undefined) throw notFound("webhook", { id });
      return toWebhookRow(r);
    },
    async delete(accountId, id) {
      const result = await db
        .deleteFrom("webhooks")
        .where("account_id", "=", accountId)
        .where("id", "=", id)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
