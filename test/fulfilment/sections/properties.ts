import { describe, expect, it } from "vitest";
import { activate, type FulfilmentEnv, fieldErrors } from "../env.ts";

/** Spec 2.4 properties, 6.3.2 measurement_webhook_id. */
export function propertiesSection(env: FulfilmentEnv): void {
  describe("device properties", () => {
    const props = () => env.services.properties;

    it("sets, replaces, lists and deletes key/value pairs", async () => {
      const a = env.account.id;
      const { device } = await activate(env, { device: { name: "Vendor Scale" } });
      expect(await props().list(a, device.id)).toEqual([]);
      expect(await props().set(a, device.id, { key: "ward", value: " 3B " })).toEqual({
        key: "ward",
        value: "3B",
      });
      await props().set(a, device.id, { key: "ward", value: "4C" });
      await props().set(a, device.id, { key: "bed", value: "" });
      expect(await props().list(a, device.id)).toEqual([
        { key: "bed", value: "" },
        { key: "ward", value: "4C" },
      ]);
      await props().delete(a, device.id, "ward");
      expect(await props().list(a, device.id)).toEqual([{ key: "bed", value: "" }]);
      await expect(props().delete(a, device.id, "ward")).rejects.toMatchObject({
        code: "E_STORE_NOT_FOUND",
      });
    });

    it('takes a measurement webhook of the account as measurement_webhook_id, or "" for all webhooks', async () => {
      const a = env.account.id;
      const { device } = await activate(env, { device: { name: "Vendor Scale" } });
      const hook = await env.store.webhooks.create(a, {
        endpoint: "https://x.example/m",
        event: "MEASUREMENT",
      });
      const set = (value: unknown) =>
        props().set(a, device.id, { key: "measurement_webhook_id", value });
      expect(await set(hook.id.toUpperCase())).toEqual({
        key: "measurement_webhook_id",
        value: hook.id,
      });
      // Spec 6.3.2: the empty string restores sending to all webhooks (kept as a value).
      expect(await set("")).toEqual({ key: "measurement_webhook_id", value: "" });
      expect(await props().list(a, device.id)).toEqual([
        { key: "measurement_webhook_id", value: "" },
      ]);
    });

    it("refuses a measurement_webhook_id that is no measurement webhook of the account", async () => {
      const a = env.account.id;
      const other = await env.store.accounts.create({
        clientDomain: "other",
        environment: "development",
      });
      const { device } = await activate(env, { device: { name: "Vendor Scale" } });
      const foreign = await env.store.webhooks.create(other.id, {
        endpoint: "https://o.example",
        event: "MEASUREMENT",
      });
      const fulfilment = await env.store.webhooks.create(a, {
        endpoint: "https://x.example/f",
        event: "FULFILLMENT",
      });
      const set = (value: unknown) =>
        props().set(a, device.id, { key: "measurement_webhook_id", value });
      expect((await fieldErrors(set("not-a-uuid"))).value).toEqual([
        expect.stringMatching(/^Must be a valid UUID/),
      ]);
      expect((await fieldErrors(set(foreign.id))).value).toEqual([
        `No webhook with id ${foreign.id} in this account (spec 6.3.2).`,
      ]);
      expect((await fieldErrors(set(fulfilment.id))).value).toEqual([
        `Webhook ${fulfilment.id} is a FULFILLMENT webhook; measurement_webhook_id must name a MEASUREMENT webhook.`,
      ]);
      expect(await fieldErrors(set(null))).toEqual({ value: ["This field may not be null."] });
      expect(await fieldErrors(props().set(a, device.id, { value: "x" }))).toEqual({
        key: ["This field is required."],
      });
      expect(await props().list(a, device.id)).toEqual([]);
    });

    it("answers not found for a device of another account", async () => {
      const other = await env.store.accounts.create({
        clientDomain: "other",
        environment: "development",
      });
      const { device } = await env.services.activation.activate(other.id, {
        device: { name: "Vendor Scale" },
      });
      for (const call of [
        () => props().list(env.account.id, device.id),
        () => props().set(env.account.id, device.id, { key: "k", value: "v" }),
        () => props().delete(env.account.id, device.id, "k"),
      ]) {
        await expect(call()).rejects.toMatchObject({ code: "E_STORE_NOT_FOUND" });
      }
      expect(await env.store.deviceProperties.list(device.id)).toEqual([]);
    });
  });
}
