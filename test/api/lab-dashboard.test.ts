import { createHash } from "node:crypto";
import type { AddressInfo } from "node:net";
import { Script } from "node:vm";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { TypedEvents } from "../../src/core/events.ts";
import { toIsoMicros } from "../../src/core/time.ts";
import type { IngestEvents } from "../../src/ingest/events.ts";
import type { DeadLetterRow } from "../../src/store/types-ingest.ts";
import { SseClient } from "../support/sse.ts";
import { ADMIN, ADMIN_TOKEN, apiKey, type Lab, makeLab, T0 } from "./helpers.ts";
import { BPM, GW, reading } from "./hwi-fixtures.ts";

/** A dead letter as ingestion announces it; `reason` sized to fill socket buffers quickly. */
function deadLetter(id: number, reason = "payload is not JSON"): DeadLetterRow {
  return {
    id,
    topic: `rpm/v1/gw/${GW}/up`,
    payload: new Uint8Array(),
    reason,
    received: T0,
    messageId: null,
    holdsClaim: false,
  };
}

/** README "Dashboard": the page, its totals and its live feed, on the API alone. */
describe("lab admin API: dashboard", () => {
  let lab: Lab;
  let base: string;
  const clients: SseClient[] = [];

  beforeEach(async () => {
    lab = await makeLab();
    await lab.app.listen({ port: 0, host: "127.0.0.1" });
    base = `http://127.0.0.1:${(lab.app.server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
    await lab.close();
  });

  const open = async (opts?: { holdUntil?: Promise<void> }) => {
    const client = await SseClient.open(`${base}/lab/v1/events/`, ADMIN_TOKEN, opts);
    clients.push(client);
    return client;
  };

  describe("GET /dashboard/", () => {
    it("serves the page without a token, its inline script and style allowed by hash only", async () => {
      const res = await lab.app.inject({ method: "GET", url: "/dashboard/" });
      expect(res.statusCode).toBe(200);
      expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
      const script = res.body.match(/<script>([\s\S]*?)<\/script>/)![1]!;
      const style = res.body.match(/<style>([\s\S]*?)<\/style>/)![1]!;
      const hash = (text: string) =>
        `'sha256-${createHash("sha256").update(text).digest("base64")}'`;
      const policy = String(res.headers["content-security-policy"]);
      expect(policy).toContain(`script-src ${hash(script)}`);
      expect(policy).toContain(`style-src ${hash(style)}`);
      expect(policy).toContain("default-src 'none'");
      expect(policy).toContain("connect-src 'self'");
      // The browser would refuse a script that does not parse: a blank dashboard.
      expect(() => new Script(script)).not.toThrow();
      // It reads the lab through the admin API, with the token the user gives it.
      expect(script).toContain('"/lab/v1/events/"');
      expect(script).toContain('"/lab/v1/overview/"');
      expect(res.body).not.toContain(ADMIN_TOKEN);
    });

    it("redirects /dashboard to /dashboard/ as every other path without its slash", async () => {
      const res = await lab.app.inject({ method: "GET", url: "/dashboard" });
      expect(res.statusCode).toBe(301);
      expect(res.headers.location).toBe("/dashboard/");
    });
  });

  describe("GET /lab/v1/overview/", () => {
    it("counts what each account holds, and the lab's dead letters", async () => {
      const { dev, prod, store } = lab;
      for (const id of ["P-1", "P-2"])
        await store.patients.create(dev.account.id, { externalId: id });
      const device = await store.devices.create(dev.account.id, {
        name: BPM,
        sensorCode: "10",
        hardwareUuid: GW,
        status: "Active",
      });
      await store.gateways.associate(dev.account.id, GW);
      await store.measurements.insertMany([
        reading(dev, device.id, { metric: "pulse" }),
        reading(dev, device.id, { metric: "blood_pressure", value1: 131, value2: 84 }),
        reading(dev, device.id, { metric: "pulse", timestamp: T0 - 3_600_000 }),
      ]);
      const hook = await store.webhooks.create(dev.account.id, {
        endpoint: "http://127.0.0.1:9/h",
        event: "MEASUREMENT",
      });
      await store.webhookDeliveries.createMany(
        [1, 2].map(() => ({
          accountId: dev.account.id,
          webhookId: hook.id,
          event: "MEASUREMENT" as const,
          body: "{}",
          retry: true,
        })),
      );
      await store.deadLetters.add({
        topic: `rpm/v1/gw/${GW}/up`,
        payload: new Uint8Array([1]),
        reason: "not JSON",
        received: T0,
        messageId: null,
      });

      const res = await lab.app.inject({ method: "GET", url: "/lab/v1/overview/", headers: ADMIN });
      expect(res.statusCode).toBe(200);
      const body = res.json() as {
        now: string;
        accounts: Record<string, unknown>[];
        dead_letters: number;
      };
      expect(body.now).toBe(toIsoMicros(lab.clock.now()));
      expect(body.dead_letters).toBe(1);
      const of = (domain: string) => body.accounts.find((a) => a.client_domain === domain);
      expect(of("acme-dev")).toEqual({
        id: dev.account.id,
        client_domain: "acme-dev",
        environment: "development",
        patients: 2,
        devices: 1,
        gateways: 1,
        measurements: 3,
        webhook_deliveries: { pending: 2, delivered: 0, failed: 0, not_retried: 0 },
      });
      // Nothing leaks across accounts.
      expect(of(prod.account.clientDomain)).toMatchObject({
        patients: 0,
        devices: 0,
        measurements: 0,
      });
    });

    it("takes the admin token, not an API key", async () => {
      const none = await lab.app.inject({ method: "GET", url: "/lab/v1/overview/" });
      expect(none.statusCode).toBe(401);
      const key = await lab.app.inject({
        method: "GET",
        url: "/lab/v1/overview/",
        headers: apiKey(lab.dev.key),
      });
      expect(key.statusCode).toBe(403);
    });
  });

  describe("GET /lab/v1/events/", () => {
    it("takes the admin token, not an API key", async () => {
      expect((await fetch(`${base}/lab/v1/events/`)).status).toBe(401);
      const key = await fetch(`${base}/lab/v1/events/`, { headers: apiKey(lab.dev.key) });
      expect(key.status).toBe(403);
    });

    it("sends each source's events to every client, and stops sending to one that left", async () => {
      const ingest = new TypedEvents<IngestEvents>();
      lab.feed.attachIngest(ingest);
      const first = await open();
      const second = await open();
      await first.next("clock");
      await second.next("clock");
      ingest.emit("dead_letter", { row: deadLetter(7) });
      const expected = {
        id: 7,
        topic: `rpm/v1/gw/${GW}/up`,
        reason: "payload is not JSON",
        at: toIsoMicros(T0),
      };
      expect(await first.next("dead_letter")).toEqual(expected);
      expect(await second.next("dead_letter")).toEqual(expected);

      await first.close();
      clients.splice(clients.indexOf(first), 1);
      await vi.waitFor(() => expect(lab.feed.listening).toBe(true));
      ingest.emit("dead_letter", { row: deadLetter(8) });
      expect(await second.next("dead_letter", (d) => d.id === 8)).toMatchObject({ id: 8 });
      await second.close();
      clients.splice(clients.indexOf(second), 1);
      // Nobody listens: no event is built, and a stored batch is not read back.
      await vi.waitFor(() => expect(lab.feed.listening).toBe(false));
      const get = vi.spyOn(lab.store.measurements, "get");
      ingest.emit("measurement.stored", {
        rows: [
          {
            id: 1,
            accountId: null,
            deviceId: null,
            hardwareUuid: GW,
            metric: "pulse",
            timestamp: T0,
          },
        ],
      });
      expect(get).not.toHaveBeenCalled();
    });

    it("drops events for a client that stops reading, then tells it how many it missed", async () => {
      const ingest = new TypedEvents<IngestEvents>();
      lab.feed.attachIngest(ingest);
      let resume!: () => void;
      const stalled = await open({ holdUntil: new Promise<void>((r) => (resume = r)) });
      // 4,000 events of 16 KiB: 64 MiB, far past the socket buffers and the 256 KiB allowed.
      const total = 4000;
      const reason = "x".repeat(16 * 1024);
      for (let id = 1; id <= total; id++)
        ingest.emit("dead_letter", { row: deadLetter(id, reason) });
      resume();
      // The next clock tick (every wall second) finds the buffer drained and reports the gap.
      const dropped = (await stalled.next("dropped")).count as number;
      const received = stalled.events.filter((e) => e.type === "dead_letter");
      expect(dropped).toBeGreaterThan(0);
      expect(received.length + dropped).toBe(total);
      // What did arrive is whole and in order: the oldest events, up to where the buffer filled.
      expect(received.map((e) => e.data.id)).toEqual(received.map((_, i) => i + 1));
    });

    it("answers HEAD with the stream's headers and ends, as it announces HEAD", async () => {
      const head = await fetch(`${base}/lab/v1/events/`, {
        method: "HEAD",
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        signal: AbortSignal.timeout(5000),
      });
      expect(head.status).toBe(200);
      expect(head.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
      expect(await head.text()).toBe("");
    });

    it("ends every open stream when the app closes", async () => {
      const client = await open();
      await client.next("clock");
      await lab.app.close();
      await client.ended;
      expect(client.events.at(-1)?.type).toBe("clock");
    });
  });
});
