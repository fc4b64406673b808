import { describe, expect, it } from "vitest";
import type { MqttRole } from "../../../src/store/types-hardware.ts";
import { advance, type ContractEnv, expectCode, T0 } from "./env.ts";

/** Issue 4: MQTT credentials issued by the lab, stored hashed. */
export function mqttCredentialsContract(env: ContractEnv): void {
  describe("MQTT credentials", () => {
    it("issues a password once, verifies it, and keeps only its hash", async () => {
      const issued = await env.store.mqttCredentials.issue("297056120BD7", "gateway");
      expect(issued.username).toBe("297056120BD7");
      expect(issued.password).toMatch(/^[0-9A-Za-z]{32}$/);
      expect(issued.credential).toEqual({
        username: "297056120BD7",
        role: "gateway",
        created: T0,
        modified: T0,
      });
      expect(await env.store.mqttCredentials.get("297056120BD7")).toEqual(issued.credential);
      expect(await env.store.mqttCredentials.verify("297056120BD7", issued.password)).toEqual(
        issued.credential,
      );
      expect(await env.store.mqttCredentials.verify("297056120BD7", "wrong")).toBeNull();
      expect(await env.store.mqttCredentials.verify("297056120bd7", issued.password)).toBeNull();
      expect(await env.store.mqttCredentials.verify("nobody", issued.password)).toBeNull();
      const rows = (await env.rawRows?.("mqtt_credentials")) ?? [];
      expect(JSON.stringify(rows)).not.toContain(issued.password);
    });

    it("rotates the password when issued again; revoking ends it", async () => {
      const first = await env.store.mqttCredentials.issue("356938035643809", "cellular");
      advance(env, 1000);
      const second = await env.store.mqttCredentials.issue("356938035643809", "cellular");
      expect(second.password).not.toBe(first.password);
      expect(second.credential).toMatchObject({ created: T0, modified: T0 + 1000 });
      expect(await env.store.mqttCredentials.verify("356938035643809", first.password)).toBeNull();
      expect(
        await env.store.mqttCredentials.verify("356938035643809", second.password),
      ).not.toBeNull();
      expect(await env.store.mqttCredentials.revoke("356938035643809")).toBe(true);
      expect(await env.store.mqttCredentials.revoke("356938035643809")).toBe(false);
      expect(await env.store.mqttCredentials.verify("356938035643809", second.password)).toBeNull();
    });

    it("refuses an empty username or an unknown role", async () => {
      await expectCode(env.store.mqttCredentials.issue("", "service"), "E_STORE_INVALID");
      await expectCode(
        env.store.mqttCredentials.issue("x", "admin" as MqttRole),
        "E_STORE_INVALID",
      );
    });
  });
}
