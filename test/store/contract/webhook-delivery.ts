import { describe, expect, it } from "vitest";
import type { Store } from "../../../src/store/store.ts";
import type { AccountRow } from "../../../src/store/types.ts";
import type { WebhookRow } from "../../../src/store/types-ingest.ts";
import type { NewAttempt, NewDelivery } from "../../../src/store/types-webhooks.ts";
import { advance, type ContractEnv, newAccount, reading } from "./env.ts";

const attempt = (over: Partial<NewAttempt> = {}): NewAttempt => ({
  at: 0,
  endpoint: "https://client.example/hook",
  statusCode: 200,
  error: null,
  latencyMs: 2.5,
  responseSnippet: "ok",
  manual: false,
  ...over,
});

/** Issue 4 §1: the transactional outbox, deliveries with claims, attempts and the log. */
export function webhookDeliveryContract(env: ContractEnv, persistent: boolean): void {
  const setup = async (): Promise<{ account: AccountRow; webhook: WebhookRow }> => {
    const account = await newAccount(env);
    const webhook = await env.store.webhooks.create(account.id, {
      endpoint: "https://client.example/hook",
      event: "MEASUREMENT",
    });
    return { account, webhook };
  };
  const delivery = (a: AccountRow, w: WebhookRow, over: Partial<NewDelivery> = {}) => ({
    accountId: a.id,
    webhookId: w.id,
    event: w.event,
    body: '{"metric":"pulse"}',
    retry: true,
    ...over,
  });

  describe("webhook outbox", () => {
    it("keeps an event only when the transaction that wrote it commits", async () => {
      const a = await newAccount(env);
      await env.store
        .transaction(async (tx) => {
          await tx.webhookOutbox.add({ accountId: a.id, event: "PATIENT", body: { x: 1 } });
          throw new Error("the change failed");
        })
        .catch(() => undefined);
      expect(await env.store.webhookOutbox.count()).toBe(0);
      await env.store.transaction((tx) =>
        tx.webhookOutbox.add({
          accountId: a.id,
          event: "FULFILLMENT",
          body: { status: "Dropshipped", tracking_link: null },
          hwiDeviceId: "d-1",
          patientId: "P-1",
        }),
      );
      await env.store.webhookOutbox.add({
        accountId: a.id,
        event: "MEASUREMENT",
        ranges: [[4, 9]],
      });
      const taken = await env.store.transaction((tx) => tx.webhookOutbox.take(10));
      expect(taken).toMatchObject([
        {
          accountId: a.id,
          event: "FULFILLMENT",
          ranges: null,
          body: { status: "Dropshipped", tracking_link: null },
          hwiDeviceId: "d-1",
          patientId: "P-1",
          created: env.clock.now(),
        },
        { event: "MEASUREMENT", ranges: [[4, 9]], body: null, hwiDeviceId: null },
      ]);
    });

    it("hands each entry to one taker: taken and deleted in one transaction, never twice", async () => {
      const a = await newAccount(env);
      for (let i = 0; i < 5; i++) {
        await env.store.webhookOutbox.add({ accountId: a.id, event: "PATIENT", body: { i } });
      }
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const takeAndDelete = (hold: boolean) =>
        env.store.transaction(async (tx) => {
          const entries = await tx.webhookOutbox.take(3);
          if (hold) await gate;
          await tx.webhookOutbox.delete(entries.map((e) => e.id));
          return entries.map((e) => (e.body as { i: number }).i);
        });
      const first = takeAndDelete(true);
      const second = takeAndDelete(false);
      // PostgreSQL: the second skips what the first holds; SQLite: it waits for the first.
      setImmediate(release);
      const [a1, a2] = await Promise.all([first, second]);
      expect([...a1, ...a2].sort()).toEqual([0, 1, 2, 3, 4]);
      expect(await env.store.webhookOutbox.count()).toBe(0);
    });

    it("reads back an account's measurements by id runs, and each device's gateway and route as they are now", async () => {
      const a = await newAccount(env);
      const b = await newAccount(env);
      const stored = (
        await env.store.measurements.insertMany(
          [a, b, a, a].map((acc, i) =>
            reading({ accountId: acc.id, deviceId: `dev-${i}`, timestamp: 1000 + i }),
          ),
        )
      ).inserted;
      const ids = stored.map((m) => m.id);
      const got = await env.store.webhookOutbox.measurements(a.id, [
        [ids[0]!, ids[1]!],
        [ids[3]!, ids[3]!],
      ]);
      expect(got.map((m) => m.id)).toEqual([ids[0], ids[3]]);
      const device = await env.store.devices.create(a.id, {
        name: "Vendor BPM - Wide Range",
        sensorCode: "10",
        hardwareUuid: null,
        status: "Active",
      });
      const linked = await env.store.devices.create(a.id, {
        name: "Vendor Scale",
        sensorCode: "12",
        hardwareUuid: "1A2B3C4D5E6F",
        status: "Active",
      });
      await env.store.deviceProperties.set(device.id, "measurement_webhook_id", "w-1");
      await env.store.deviceProperties.set(device.id, "other", "x");
      await env.store.deviceProperties.set(linked.id, "other", "y");
      const now = await env.store.webhookOutbox.devicesNow(
        [device.id, linked.id, "no-such-device"],
        "measurement_webhook_id",
      );
      expect(Object.fromEntries(now)).toEqual({
        [device.id]: { hardwareUuid: null, route: "w-1" },
        [linked.id]: { hardwareUuid: "1A2B3C4D5E6F", route: undefined },
      });
    });
  });

  describe("webhook deliveries", () => {
    it("creates pending deliveries with stable ids, due now unless told", async () => {
      const { account, webhook } = await setup();
      const [d1, d2] = await env.store.webhookDeliveries.createMany([
        delivery(account, webhook, { measurementIds: [7, 8], hwiDeviceId: "dev", patientId: "P" }),
        delivery(account, webhook, {
          retry: false,
          test: true,
          nextAttemptAt: env.clock.now() + 5,
        }),
      ]);
      expect(d1).toMatchObject({
        accountId: account.id,
        webhookId: webhook.id,
        state: "pending",
        attempts: 0,
        retry: true,
        test: false,
        nextAttemptAt: env.clock.now(),
        measurementIds: [7, 8],
        hwiDeviceId: "dev",
        patientId: "P",
      });
      expect(d1!.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(d2).toMatchObject({ retry: false, test: true, nextAttemptAt: env.clock.now() + 5 });
      expect(await env.store.webhookDeliveries.get(account.id, d1!.id)).toEqual(d1);
      expect(await env.store.webhookDeliveries.get((await newAccount(env)).id, d1!.id)).toBeNull();
      expect(await env.store.webhookDeliveries.nextDue()).toBe(env.clock.now());
      expect(await env.store.webhookDeliveries.dueWebhooks(env.clock.now())).toEqual([webhook.id]);
    });

    it("writes a caller-only delivery (a test send) not_retried with nothing due: no claim takes it, its caller's attempt is recorded", async () => {
      const { account, webhook } = await setup();
      const [d] = await env.store.webhookDeliveries.createMany([
        delivery(account, webhook, { retry: false, test: true, callerOnly: true }),
      ]);
      expect(d).toMatchObject({ state: "not_retried", nextAttemptAt: null, attempts: 0 });
      expect(await env.store.webhookDeliveries.get(account.id, d!.id)).toEqual(d);
      const later = env.clock.now() + 86_400_000;
      expect(await env.store.webhookDeliveries.nextDue()).toBeNull();
      expect(await env.store.webhookDeliveries.dueWebhooks(later)).toEqual([]);
      expect(
        await env.store.webhookDeliveries.claim(webhook.id, {
          now: later,
          until: later,
          limit: 10,
        }),
      ).toEqual([]);
      await env.store.transaction((tx) =>
        tx.webhookDeliveries.record([
          {
            deliveryId: d!.id,
            attempt: {
              at: env.clock.now(),
              endpoint: webhook.endpoint,
              statusCode: 200,
              error: null,
              latencyMs: 3,
              responseSnippet: null,
              manual: false,
            },
            state: "delivered",
            nextAttemptAt: null,
          },
        ]),
      );
      expect(await env.store.webhookDeliveries.get(account.id, d!.id)).toMatchObject({
        state: "delivered",
        attempts: 1,
      });
    });

    it("claims due deliveries once; a claim that is not recorded lapses and they are due again", async () => {
      const { account, webhook } = await setup();
      const other = await env.store.webhooks.create(account.id, {
        endpoint: "https://elsewhere.example/",
        event: "MEASUREMENT",
      });
      const made = await env.store.webhookDeliveries.createMany([
        delivery(account, webhook),
        delivery(account, webhook),
        delivery(account, webhook),
        delivery(account, other),
      ]);
      const now = env.clock.now();
      const first = await env.store.webhookDeliveries.claim(webhook.id, {
        now,
        until: now + 30_000,
        limit: 2,
      });
      expect(first).toHaveLength(2);
      expect(first.every((d) => d.nextAttemptAt === now + 30_000)).toBe(true);
      const rest = await env.store.webhookDeliveries.claim(webhook.id, {
        now,
        until: now + 30_000,
        limit: 10,
      });
      expect(rest).toHaveLength(1);
      expect(new Set([...first, ...rest].map((d) => d.id))).toEqual(
        new Set(made.slice(0, 3).map((d) => d.id)),
      );
      expect(
        await env.store.webhookDeliveries.claim(webhook.id, { now, until: now + 1, limit: 10 }),
      ).toEqual([]);
      expect(await env.store.webhookDeliveries.dueWebhooks(now)).toEqual([other.id]);
      advance(env, 30_000);
      const again = await env.store.webhookDeliveries.claim(webhook.id, {
        now: env.clock.now(),
        until: env.clock.now() + 30_000,
        limit: 10,
      });
      expect(again).toHaveLength(3);
    });

    it("says which pending deliveries a dispatcher has claimed: not a retry's wait, not one given back", async () => {
      const { account, webhook } = await setup();
      const now = env.clock.now();
      const [due, heldAtCreation] = await env.store.webhookDeliveries.createMany([
        delivery(account, webhook),
        delivery(account, webhook, { nextAttemptAt: now + 30_000 }),
      ]);
      expect(heldAtCreation!.inFlight).toBe(true);
      const inFlight = async () =>
        (await env.store.webhookDeliveries.list(account.id, {})).rows
          .filter((r) => r.inFlight)
          .map((r) => r.id);
      expect(await inFlight()).toEqual([heldAtCreation!.id]);
      const [claimed] = await env.store.webhookDeliveries.claim(webhook.id, {
        now,
        until: now + 30_000,
        limit: 1,
      });
      expect(claimed).toMatchObject({ id: due!.id, inFlight: true });
      expect(await env.store.webhookDeliveries.get(account.id, due!.id)).toMatchObject({
        inFlight: true,
        nextAttemptAt: now + 30_000,
      });
      // A failure's retry time is a due time, not a claim; a claim given back is due again.
      await env.store.webhookDeliveries.record([
        {
          deliveryId: due!.id,
          attempt: attempt({ statusCode: 503 }),
          state: "pending",
          nextAttemptAt: now + 15_000,
        },
      ]);
      await env.store.webhookDeliveries.release([heldAtCreation!.id], now);
      expect(await inFlight()).toEqual([]);
      expect(await env.store.webhookDeliveries.get(account.id, due!.id)).toMatchObject({
        state: "pending",
        nextAttemptAt: now + 15_000,
      });
    });

    it("never hands one delivery to two concurrent claims", async () => {
      const { account, webhook } = await setup();
      await env.store.webhookDeliveries.createMany(
        Array.from({ length: 40 }, () => delivery(account, webhook)),
      );
      const now = env.clock.now();
      const claims = await Promise.all(
        Array.from({ length: 4 }, () =>
          env.store.webhookDeliveries.claim(webhook.id, { now, until: now + 1000, limit: 15 }),
        ),
      );
      const ids = claims.flat().map((d) => d.id);
      expect(ids).toHaveLength(40);
      expect(new Set(ids).size).toBe(40);
    });

    it("logs an answer holding U+0000 as \\u0000 on every store (PostgreSQL text refuses it)", async () => {
      const { account, webhook } = await setup();
      const [d] = await env.store.webhookDeliveries.createMany([delivery(account, webhook)]);
      await env.store.webhookDeliveries.record([
        {
          deliveryId: d!.id,
          attempt: attempt({ responseSnippet: "ok\u0000done", error: "cut\u0000" }),
          state: "delivered",
          nextAttemptAt: null,
        },
      ]);
      expect(await env.store.webhookDeliveries.attempts(d!.id)).toMatchObject([
        { responseSnippet: "ok\\u0000done", error: "cut\\u0000" },
      ]);
    });

    it("records attempts in order and the state they lead to; delivered stays delivered", async () => {
      const { account, webhook } = await setup();
      const [d, e] = await env.store.webhookDeliveries.createMany([
        delivery(account, webhook),
        delivery(account, webhook, { retry: false }),
      ]);
      const t = env.clock.now();
      await env.store.webhookDeliveries.record([
        {
          deliveryId: d!.id,
          attempt: attempt({ at: t, statusCode: 503, responseSnippet: "busy" }),
          state: "pending",
          nextAttemptAt: t + 15_000,
        },
        {
          deliveryId: e!.id,
          attempt: attempt({ at: t, statusCode: null, error: "ECONNREFUSED" }),
          state: "not_retried",
          nextAttemptAt: null,
        },
      ]);
      expect(await env.store.webhookDeliveries.get(account.id, d!.id)).toMatchObject({
        state: "pending",
        attempts: 1,
        nextAttemptAt: t + 15_000,
      });
      advance(env, 15_000);
      await env.store.webhookDeliveries.record([
        {
          deliveryId: d!.id,
          attempt: attempt({ at: t + 15_000 }),
          state: "delivered",
          nextAttemptAt: null,
        },
      ]);
      // A failed resend after the delivery succeeded is logged; the delivery stays delivered.
      await env.store.webhookDeliveries.record([
        {
          deliveryId: d!.id,
          attempt: attempt({ at: t + 16_000, statusCode: 500, manual: true }),
          state: "failed",
          nextAttemptAt: null,
        },
      ]);
      expect(await env.store.webhookDeliveries.get(account.id, d!.id)).toMatchObject({
        state: "delivered",
        attempts: 3,
        nextAttemptAt: null,
        modified: t + 15_000,
      });
      const attempts = await env.store.webhookDeliveries.attempts(d!.id);
      expect(attempts.map((a) => [a.number, a.statusCode, a.manual])).toEqual([
        [1, 503, false],
        [2, 200, false],
        [3, 500, true],
      ]);
      expect(attempts[0]).toMatchObject({
        deliveryId: d!.id,
        at: t,
        endpoint: "https://client.example/hook",
        latencyMs: 2.5,
        responseSnippet: "busy",
        error: null,
      });
      expect(await env.store.webhookDeliveries.get(account.id, e!.id)).toMatchObject({
        state: "not_retried",
        attempts: 1,
      });
      expect((await env.store.webhookDeliveries.attempts(e!.id))[0]).toMatchObject({
        statusCode: null,
        error: "ECONNREFUSED",
      });
      expect(await env.store.webhookDeliveries.nextDue()).toBeNull();
    });

    it("a failed resend leaves the state and schedule the delivery has by then, and counts apart as a resend", async () => {
      const { account, webhook } = await setup();
      const [d] = await env.store.webhookDeliveries.createMany([delivery(account, webhook)]);
      const t = env.clock.now();
      // The dispatcher records an automatic failure while a resend of the same delivery is under
      // way; the resend then fails too, and must not write back what it read before.
      await env.store.webhookDeliveries.record([
        {
          deliveryId: d!.id,
          attempt: attempt({ at: t, statusCode: 503 }),
          state: "pending",
          nextAttemptAt: t + 15_000,
        },
      ]);
      await env.store.webhookDeliveries.record([
        {
          deliveryId: d!.id,
          attempt: attempt({ at: t, statusCode: 500, manual: true }),
          state: null,
          nextAttemptAt: null,
        },
      ]);
      expect(await env.store.webhookDeliveries.get(account.id, d!.id)).toMatchObject({
        state: "pending",
        nextAttemptAt: t + 15_000,
        attempts: 2,
        manualAttempts: 1,
      });
      await env.store.webhookDeliveries.record([
        {
          deliveryId: d!.id,
          attempt: attempt({ at: t, manual: true }),
          state: "delivered",
          nextAttemptAt: null,
        },
      ]);
      expect(await env.store.webhookDeliveries.get(account.id, d!.id)).toMatchObject({
        state: "delivered",
        nextAttemptAt: null,
        attempts: 3,
        manualAttempts: 2,
      });
      const attempts = await env.store.webhookDeliveries.attempts(d!.id);
      expect(attempts.map((a) => [a.number, a.statusCode, a.manual])).toEqual([
        [1, 503, false],
        [2, 500, true],
        [3, 200, true],
      ]);
    });

    it("lists the log newest first with each delivery's latest attempt, filtered and counted", async () => {
      const { account, webhook } = await setup();
      const patientHook = await env.store.webhooks.create(account.id, {
        endpoint: "https://client.example/patients",
        event: "PATIENT",
      });
      const [old] = await env.store.webhookDeliveries.createMany([
        delivery(account, webhook, { hwiDeviceId: "dev-1" }),
      ]);
      advance(env, 1000);
      const [young] = await env.store.webhookDeliveries.createMany([
        delivery(account, patientHook, { retry: false, patientId: "P-1" }),
      ]);
      await env.store.webhookDeliveries.record([
        {
          deliveryId: old!.id,
          attempt: attempt({ statusCode: 500 }),
          state: "pending",
          nextAttemptAt: 1,
        },
        {
          deliveryId: old!.id,
          attempt: attempt({ statusCode: 201 }),
          state: "delivered",
          nextAttemptAt: null,
        },
      ]);
      const all = await env.store.webhookDeliveries.list(account.id, {}, { count: true });
      expect(all.total).toBe(2);
      expect(all.rows.map((r) => r.id)).toEqual([young!.id, old!.id]);
      expect(all.rows[0]!.lastAttempt).toBeNull();
      expect(all.rows[1]!.lastAttempt).toMatchObject({ number: 2, statusCode: 201 });
      const by = async (filter: Parameters<Store["webhookDeliveries"]["list"]>[1]) =>
        (await env.store.webhookDeliveries.list(account.id, filter)).rows.map((r) => r.id);
      expect(await by({ webhookId: webhook.id })).toEqual([old!.id]);
      expect(await by({ state: "pending" })).toEqual([young!.id]);
      expect(await by({ event: "PATIENT" })).toEqual([young!.id]);
      expect(await by({ hwiDeviceId: "dev-1" })).toEqual([old!.id]);
      expect(await by({ patientId: "P-1" })).toEqual([young!.id]);
      const page = await env.store.webhookDeliveries.list(account.id, {}, { limit: 1, offset: 1 });
      expect(page.rows.map((r) => r.id)).toEqual([old!.id]);
      expect(await env.store.webhookDeliveries.countByState(account.id)).toEqual({
        pending: 1,
        delivered: 1,
        failed: 0,
        not_retried: 0,
      });
      const other = await newAccount(env);
      expect(await env.store.webhookDeliveries.countByState(other.id)).toEqual({
        pending: 0,
        delivered: 0,
        failed: 0,
        not_retried: 0,
      });
    });

    it("gives claims back, and prunes finished deliveries by age with their attempts", async () => {
      const { account, webhook } = await setup();
      const [done, waiting] = await env.store.webhookDeliveries.createMany([
        delivery(account, webhook),
        delivery(account, webhook),
      ]);
      const now = env.clock.now();
      await env.store.webhookDeliveries.claim(webhook.id, { now, until: now + 60_000, limit: 10 });
      await env.store.webhookDeliveries.record([
        { deliveryId: done!.id, attempt: attempt(), state: "delivered", nextAttemptAt: null },
      ]);
      expect(await env.store.webhookDeliveries.nextDue()).toBe(now + 60_000);
      await env.store.webhookDeliveries.release([waiting!.id, done!.id], now);
      expect(await env.store.webhookDeliveries.nextDue()).toBe(now);
      expect((await env.store.webhookDeliveries.get(account.id, done!.id))?.state).toBe(
        "delivered",
      );
      advance(env, 10);
      expect(await env.store.webhookDeliveries.prune(now)).toBe(0);
      expect(await env.store.webhookDeliveries.prune(now + 1)).toBe(1);
      expect(await env.store.webhookDeliveries.get(account.id, done!.id)).toBeNull();
      expect(await env.store.webhookDeliveries.attempts(done!.id)).toEqual([]);
      // Pending deliveries are never pruned, however old.
      expect(await env.store.webhookDeliveries.get(account.id, waiting!.id)).not.toBeNull();
    });

    it("keeps a webhook's signing secret and an account's status-metric choice", async () => {
      const { account, webhook } = await setup();
      expect(webhook.signingSecret).toBeNull();
      expect(account.omitStatusMetrics).toBe(false);
      const signed = await env.store.webhooks.update(account.id, webhook.id, {
        signingSecret: "whsec_0123456789abcdef",
      });
      expect(signed.signingSecret).toBe("whsec_0123456789abcdef");
      expect(await env.store.webhooks.getMany([webhook.id, "nope"])).toEqual([signed]);
      const changed = await env.store.accounts.update(account.id, { omitStatusMetrics: true });
      expect(changed.omitStatusMetrics).toBe(true);
      expect((await env.store.accounts.get(account.id))?.omitStatusMetrics).toBe(true);
    });
  });

  // A store in memory has no restart to survive.
  if (!persistent) return;
  it("a pending delivery and its due time survive a restart", async () => {
    const { account, webhook } = await setup();
    const [d] = await env.store.webhookDeliveries.createMany([delivery(account, webhook)]);
    await env.store.webhookDeliveries.record([
      {
        deliveryId: d!.id,
        attempt: attempt({ statusCode: 502 }),
        state: "pending",
        nextAttemptAt: 12_345,
      },
    ]);
    const again = await env.reopen!();
    expect(await again.webhookDeliveries.get(account.id, d!.id)).toMatchObject({
      state: "pending",
      attempts: 1,
      nextAttemptAt: 12_345,
    });
    expect(await again.webhookDeliveries.nextDue()).toBe(12_345);
  });
}
