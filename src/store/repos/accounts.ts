import type { Selectable } from "kysely";
import { type Ctx, conflict, invalid, notFound, templated } from "../context.ts";
import { readBool, readNum } from "../dialect.ts";
import { param } from "../query-templates.ts";
import type { AccountsTable } from "../schema.ts";
import type { AccountsRepo } from "../store.ts";
import type { AccountRow, Environment } from "../types.ts";

const ENVIRONMENTS: readonly Environment[] = ["development", "production"];

export function toAccountRow(r: Selectable<AccountsTable>): AccountRow {
  return {
    id: r.id,
    clientDomain: r.client_domain,
    environment: r.environment as Environment,
    asrEnabled: readBool(r.asr_enabled),
    omitStatusMetrics: readBool(r.omit_status_metrics),
    created: readNum(r.created),
    modified: readNum(r.modified),
  };
}

/** Accounts: client domain, environment, ASR flag (issue text; spec 4.5, 5). */
export function accountsRepo(ctx: Ctx): AccountsRepo {
  const { db, d } = ctx;
  // Outbox expansion reads the account of every entry (expand.ts).
  const get = async (id: string) => {
    const [r] = await templated(
      ctx,
      "accounts.get",
      () => db.selectFrom("accounts").selectAll().where("id", "=", param<string>("id")),
      { id },
    );
    return r === undefined ? null : toAccountRow(r);
  };
  const getByClientDomain = async (clientDomain: string) => {
    const r = await db
      .selectFrom("accounts")
      .selectAll()
      .where("client_domain_lc", "=", clientDomain.toLowerCase())
      .executeTakeFirst();
    return r === undefined ? null : toAccountRow(r);
  };
  return {
    async create(input) {
      if (!ENVIRONMENTS.includes(input.environment)) {
        throw invalid(`environment must be development or production`, {
          field: "environment",
          value: input.environment,
        });
      }
      if (input.clientDomain.trim() === "") {
        throw invalid("client domain must not be empty", { field: "client_domain" });
      }
      const now = ctx.clock.now();
      // ON CONFLICT DO NOTHING rather than catching the violation: a failed statement would
      // abort a surrounding PostgreSQL transaction.
      const r = await db
        .insertInto("accounts")
        .values({
          id: input.id ?? ctx.ids.uuid(),
          client_domain: input.clientDomain,
          client_domain_lc: input.clientDomain.toLowerCase(),
          environment: input.environment,
          asr_enabled: d.toBool(input.asrEnabled ?? false),
          created: now,
          modified: now,
        })
        .onConflict((oc) => oc.doNothing())
        .returningAll()
        .executeTakeFirst();
      if (r === undefined) {
        // Client domains are unique whatever their case: name the one that is there.
        const taken = (await getByClientDomain(input.clientDomain))?.clientDomain;
        const spelling =
          taken === undefined || taken === input.clientDomain
            ? ""
            : ` as "${taken}" (client domains are compared without case)`;
        throw conflict(
          `an account with client domain "${input.clientDomain}" already exists${spelling}`,
          { field: "client_domain", value: input.clientDomain },
        );
      }
      return toAccountRow(r);
    },
    get,
    getByClientDomain,
    async list() {
      const rows = await db
        .selectFrom("accounts")
        .selectAll()
        .orderBy("created")
        .orderBy("id")
        .execute();
      return rows.map(toAccountRow);
    },
    async update(id, patch) {
      const r = await db
        .updateTable("accounts")
        .set({
          ...(patch.asrEnabled === undefined ? {} : { asr_enabled: d.toBool(patch.asrEnabled) }),
          ...(patch.omitStatusMetrics === undefined
            ? {}
            : { omit_status_metrics: d.toBool(patch.omitStatusMetrics) }),
          modified: ctx.clock.now(),
        })
        .where("id", "=", id)
        .returningAll()
        .executeTakeFirst();
      if (r === undefined) throw notFound("account", { id });
      return toAccountRow(r);
    },
  };
}
