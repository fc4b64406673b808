import { afterEach, describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { connectClient } from "../../src/mqtt/client.ts";
import { ServeLab } from "../gateway/serve-lab.ts";
import { Clients, within } from "./helpers.ts";

const GW = "A1B2C3D4E5F6";

describe("serve: issuing a gateway's credentials again", () => {
  let serve: ServeLab | undefined;
  const clients = new Clients();

  afterEach(async () => {
    await clients.endAll();
    await serve?.stop();
    serve = undefined;
  });

  it("ends the connections still open with the password it replaced", async () => {
    serve = await ServeLab.start(new VirtualClock({ startMs: Date.UTC(2026, 0, 1) }));
    const leaked = await serve.gatewayCredentials(GW);
    const old = clients.add(
      await connectClient(serve.info.mqtt_url, {
        clientId: GW,
        ...leaked,
        clean: true,
        reconnectPeriod: 0,
      }),
    );
    const closed = new Promise<void>((resolve) => old.once("close", () => resolve()));
    // The admin rotates the password (README "Credentials and ACL": the old one is refused);
    // a connection made with it must not go on publishing as the gateway.
    const fresh = await serve.gatewayCredentials(GW);
    await within(closed, "the broker to end the connection on the replaced password");
    // The new password connects, and the ACL still applies to it.
    const current = clients.add(
      await connectClient(serve.info.mqtt_url, {
        clientId: GW,
        ...fresh,
        clean: true,
        reconnectPeriod: 0,
      }),
    );
    expect(current.connected).toBe(true);
    await expect(
      connectClient(serve.info.mqtt_url, {
        clientId: GW,
        ...leaked,
        clean: true,
        reconnectPeriod: 0,
      }),
    ).rejects.toMatchObject({ code: "E_BROKER_REFUSED", details: { returnCode: 4 } });
  });
});
