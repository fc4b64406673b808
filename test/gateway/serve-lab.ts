import { Lab, type LabInfo } from "../../src/app/lab.ts";
import { serveConfig } from "../../src/config/serve-config.ts";
import { createLogger } from "../../src/core/logger.ts";
import type { VirtualClock } from "../../src/core/virtual-clock.ts";

/**
 * `rpmlab serve` in this process, as its composition root builds it (src/app/lab.ts: store,
 * embedded broker with the lab's credentials and ACL, ingestion through the broker's tap,
 * downlinks, HTTP API on a free port), on a VirtualClock, with a memory store.
 */
export class ServeLab {
  private constructor(
    readonly lab: Lab,
    readonly info: LabInfo,
  ) {}

  static async start(clock: VirtualClock, broker = "embedded:0"): Promise<ServeLab> {
    const config = serveConfig(
      { store: "memory", broker, port: "0", adminToken: "gateway-e2e-admin-token" },
      {},
    );
    const lab = new Lab(config, createLogger({ level: "silent" }), clock);
    return new ServeLab(lab, await lab.start());
  }

  /** An HWI call with the lab's API key; the body parsed as JSON. */
  async hwi<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const { base_url, client_domain, api_key } = this.info;
    const response = await fetch(`${base_url}/clients/${client_domain}/hwi/${path}`, {
      method,
      headers: {
        authorization: `Api-Key ${api_key}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: (text === "" ? null : JSON.parse(text)) as T };
  }

  /** MQTT credentials for a gateway, issued by the lab admin API (README "rpmlab serve"). */
  async gatewayCredentials(gatewayUuid: string): Promise<{ username: string; password: string }> {
    const response = await fetch(`${this.info.base_url}/lab/v1/mqtt-credentials/`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${this.info.admin_token}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ role: "gateway", username: gatewayUuid }),
    });
    if (response.status !== 201) throw new Error(`credentials: ${await response.text()}`);
    return (await response.json()) as { username: string; password: string };
  }

  stop(): Promise<void> {
    return this.lab.stop();
  }
}
