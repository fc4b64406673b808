import mqtt from "mqtt";
import { Lab, type LabDeps, type LabInfo } from "../../src/app/lab.ts";
import { serveConfig } from "../../src/config/serve-config.ts";
import { createLogger, type Logger } from "../../src/core/logger.ts";
import type { VirtualClock } from "../../src/core/virtual-clock.ts";
import { LabApi } from "../support/lab-api.ts";

/**
 * `rpmlab serve` in this process, as its composition root builds it (src/app/lab.ts: store,
 * embedded broker with the lab's credentials and ACL, ingestion through the broker's tap,
 * downlinks, HTTP API on a free port), on a VirtualClock, with a memory store.
 */
export class ServeLab {
  private readonly api: LabApi;

  private constructor(
    readonly lab: Lab,
    readonly info: LabInfo,
  ) {
    this.api = new LabApi(info);
  }

  /**
   * On `port` (default: a free one), e.g. the port of a lab stopped before: a restart. `logger`
   * (default silent) hears what the lab logs; `deps` open its store (to see or seed it).
   */
  static async start(
    clock: VirtualClock,
    broker = "embedded:0",
    port = 0,
    options: { readonly logger?: Logger; readonly deps?: LabDeps } = {},
  ): Promise<ServeLab> {
    const config = serveConfig(
      { store: "memory", broker, port: String(port), adminToken: "gateway-e2e-admin-token" },
      {},
    );
    const logger = options.logger ?? createLogger({ level: "silent" });
    const lab = new Lab(config, logger, clock, options.deps);
    return new ServeLab(lab, await lab.start());
  }

  /** An HWI call with the lab's API key; the body parsed as JSON. */
  hwi<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    return this.api.hwi<T>(method, path, body);
  }

  /** MQTT credentials for a gateway, issued by the lab admin API (README "rpmlab serve"). */
  gatewayCredentials(gatewayUuid: string): Promise<{ username: string; password: string }> {
    return this.api.credentials("gateway", gatewayUuid);
  }

  /** An MQTT client connected as the gateway, with the lab's credentials (a gateway's session). */
  async gatewayClient(gatewayUuid: string): Promise<mqtt.MqttClient> {
    return mqtt.connectAsync(this.info.mqtt_url, {
      ...(await this.gatewayCredentials(gatewayUuid)),
      clientId: gatewayUuid,
    });
  }

  async stop(): Promise<void> {
    await this.lab.stop();
  }
}
