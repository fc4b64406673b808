import { describe, expect, it } from "vitest";
import type { WebhookEvent } from "../../../src/store/types-ingest.ts";
import { advance, type ContractEnv, expectCode, newAccount } from "./env.ts";

/** Webhook registry (wire-formats), replacements and hardware-uuid logs (spec 4.3). */
export function registryContract(env: ContractEnv): void {
  describe("webhooks", () => {
    it("creates with defaults and reads back every field", async () => {
      const a = await newAccount(env);
      const w = await env.store.webhooks.create(a.id, {
        endpoint: "https://client.example/measurements",
        event: "MEASUREMENT",
      });
      expect(w).toMatchObject({
        accountId: a.id,
        endpoint: "https://client.example/measurements",
        authHeader: null,
        authKey: null,
        event: "MEASUREMENT",
        postAsArray: false,
        enabledByDefault: true,
        created: env.clock.now(),
        modified: env.clock.now(),
      });
      expect(w.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(await env.store.webhooks.get(a.id, w.id)).toEqual(w);
      expect(await env.store.webhooks.get((await newAccount(env)).id, w.id)).toBeNull();
      const fixed = await env.store.webhooks.create(a.id, {
        id: "497f6eca-6276-4993-bfeb-53cbbbba6f08",
        endpoint: "https://client.example/fulfilment",
        authHeader: "Authorization",
        authKey: "Bearer s3cret",
        event: "FULFILLMENT",
        postAsArray: true,
        enabledByDefault: false,
      });
      expect(await env.store.webhooks.get(a.id, "497f6eca-6276-4993-bfeb-53cbbbba6f08")).toEqual(
        fixed,
      );
      expect(fixed).toMatchObject({
        postAsArray: true,
        enabledByDefault: false,
        authKey: "Bearer s3cret",
      });
    });

    it("lists per account, by event, updates and deletes", async () => {
      const a = await newAccount(env);
      const b = await newAccount(env);
      const events: WebhookEvent[] = ["MEASUREMENT", "PATIENT", "MEASUREMENT", "SPECIAL_ORDER"];
      const made = [];
      for (const event of events) {
        made.push(await env.store.webhooks.create(a.id, { endpoint: `https://x/${event}`, event }));
        advance(env, 1);
      }
      await env.store.webhooks.create(b.id, { endpoint: "https://y", event: "MEASUREMENT" });
      expect((await env.store.webhooks.list(a.id)).map((w) => w.id)).toEqual(made.map((w) => w.id));
      expect(
        (await env.store.webhooks.list(a.id, { event: "MEASUREMENT" })).map((w) => w.id),
      ).toEqual([made[0]!.id, made[2]!.id]);
      const updated = await env.store.webhooks.update(a.id, made[0]!.id, {
        enabledByDefault: false,
        authHeader: "X-Key",
      });
      expect(updated).toMatchObject({
        enabledByDefault: false,
        authHeader: "X-Key",
        endpoint: "https://x/MEASUREMENT",
        modified: made[0]!.created + 4,
      });
      await expectCode(
        env.store.webhooks.update(b.id, made[0]!.id, { endpoint: "z" }),
        "E_STORE_NOT_FOUND",
      );
      expect(await env.store.webhooks.delete(b.id, made[1]!.id)).toBe(false);
      expect(await env.store.webhooks.delete(a.id, made[1]!.id)).toBe(true);
      expect(await env.store.webhooks.list(a.id)).toHaveLength(3);
    });

    it("accepts only the four event kinds", async () => {
      const a = await newAccount(env);
      await expectCode(
        env.store.webhooks.create(a.id, { endpoint: "https://x", event: "DEVICE" as WebhookEvent }),
        "E_STORE_INVALID",
      );
      const w = await env.store.webhooks.create(a.id, { endpoint: "https://x", event: "PATIENT" });
      await expectCode(
        env.store.webhooks.update(a.id, w.id, { event: "measurement" as WebhookEvent }),
        "E_STORE_INVALID",
      );
    });
  });

  describe("replacements and hardware logs", () => {
    it("records a replacement request and what happened to it", async () => {
      const a = await newAccount(env);
      const d = await env.store.devices.create(a.id, {
        name: "Vendor BPM - Wide Range",
        sensorCode: "10",
        hardwareUuid: "297056120BD7",
        status: "Delivered",
      });
      const r = await env.store.replacements.create(a.id, {
        deviceId: d.id,
        deviceTypes: ["Vendor BPM - Wide Range", "Gateway"],
        shippingName: "Ada",
        shippingState: "CA",
        shippingZipCode: "92614",
        notifyEmails: "a@example.com, b@example.com",
        previousHardwareUuid: "297056120BD7",
      });
      expect(r).toMatchObject({
        deviceTypes: ["Vendor BPM - Wide Range", "Gateway"],
        shippingAddress: null,
        shippingZipCode: "92614",
        newHardwareUuid: null,
        status: null,
      });
      advance(env, 10);
      const done = await env.store.replacements.update(a.id, r.id, {
        newHardwareUuid: "FED091A643FF",
        status: "Dropshipped",
      });
      expect(done).toMatchObject({
        newHardwareUuid: "FED091A643FF",
        status: "Dropshipped",
        modified: r.created + 10,
      });
      expect(await env.store.replacements.get(a.id, r.id)).toEqual(done);
      const b = await newAccount(env);
      expect(await env.store.replacements.get(b.id, r.id)).toBeNull();
      await expectCode(
        env.store.replacements.update(b.id, r.id, { status: "x" }),
        "E_STORE_NOT_FOUND",
      );
      await expectCode(
        env.store.replacements.create(b.id, { deviceId: d.id, deviceTypes: ["Gateway"] }),
        "E_STORE_NOT_FOUND",
      );
      const second = await env.store.replacements.create(a.id, { deviceId: d.id, deviceTypes: [] });
      const page = await env.store.replacements.list(
        a.id,
        { deviceId: d.id },
        { limit: 1, offset: 1, count: true },
      );
      expect(page).toEqual({ rows: [second], total: 2 });
    });

    it("lists hardware-uuid logs oldest first, per device, paginated", async () => {
      const a = await newAccount(env);
      const d = await env.store.devices.create(a.id, {
        name: "n",
        status: "s",
        hardwareUuid: "G1",
      });
      await env.store.devices.update(a.id, d.id, { hardwareUuid: "G2" });
      await env.store.hardwareLogs.add(a.id, {
        deviceId: "other-device",
        previousHardwareUuid: "G7",
        hardwareUuid: "G8",
        reason: "replacement",
      });
      await env.store.devices.unlinkDevice(a.id, d.id);
      const all = await env.store.hardwareLogs.list(a.id, {}, { count: true });
      expect(
        all.rows.map((l) => [l.deviceId === d.id, l.previousHardwareUuid, l.hardwareUuid]),
      ).toEqual([
        [true, null, "G1"],
        [true, "G1", "G2"],
        [false, "G7", "G8"],
        [true, "G2", null],
      ]);
      expect(all.total).toBe(4);
      const page = await env.store.hardwareLogs.list(
        a.id,
        { deviceId: d.id },
        { limit: 2, offset: 1, count: true },
      );
      expect(page.rows.map((l) => l.reason)).toEqual(["update", "unlink"]);
      expect(page.total).toBe(3);
      expect((await env.store.hardwareLogs.list((await newAccount(env)).id)).rows).toEqual([]);
    });
  });
}
