/**
 * A gateway whose BLE side fails to stop (its btsnoop capture could not be written: a full
 * disk): the modem still powers off, so the process can end (`rpmlab gateway` after Ctrl-C).
 */
import { afterEach, describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { STEADY_LINK_PROFILE } from "../../src/cellular/link.ts";
import { RpmlabError } from "../../src/core/errors.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { DirectRadio } from "../../src/devices/direct-device.ts";
import { Gateway } from "../../src/gateway/gateway.ts";
import { DirectBle } from "../../src/gateway/gateway-ble.ts";
import { createBroker } from "../../src/mqtt/broker.ts";

const GW = "D0D1D2D3D4D7";

/** A BLE side whose stop fails after it has stopped, as NobleBle's does on a capture error. */
class FailingStopBle extends DirectBle {
  override async stop(): Promise<void> {
    await super.stop();
    throw new RpmlabError("E_USAGE", "cannot write the btsnoop capture: ENOSPC");
  }
}

describe("a gateway whose BLE side fails to stop", () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("still powers its modem off: the broker connection and the link's timers end", async () => {
    const broker = createBroker("embedded:0");
    await broker.start();
    cleanups.push(() => broker.stop());
    const gateway = await Gateway.open({
      clock: new VirtualClock({ startMs: Date.UTC(2026, 6, 1) }),
      rng: new Rng("stop-faults"),
      catalogue: Catalogue.load(),
      gatewayUuid: GW,
      broker: { url: broker.url },
      ble: new FailingStopBle(new DirectRadio()),
      link: { profile: STEADY_LINK_PROFILE },
    });
    await gateway.start();
    cleanups.push(() => gateway.modem.stop());
    expect(gateway.modem.session.connected).toBe(true);
    await expect(gateway.stop()).rejects.toThrow(/btsnoop/);
    // The modem was left on: connected to the broker, its link sampling, the process held.
    expect(gateway.modem.link.cause).toBe("stopped");
    expect(gateway.modem.session.connected).toBe(false);
  });
});
