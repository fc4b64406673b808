/**
 * The service's time against `rpmlab serve`'s composition on a virtual Clock (README "Cellular
 * gateway", Time): the lab answers a check-in with its time only when the check-in's
 * `checkin_at` is over a second off its receipt, so a gateway whose clock is right gets no time
 * downlink at all, one an hour off is set at its first check-in, and one that goes wrong later
 * is set at its next check-in.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { STEADY_LINK_PROFILE } from "../../src/cellular/link.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { DirectRadio } from "../../src/devices/direct-device.ts";
import { CHECKIN_EVERY_MS } from "../../src/gateway/checkin-period.ts";
import { Gateway } from "../../src/gateway/gateway.ts";
import { DirectBle } from "../../src/gateway/gateway-ble.ts";
import { ServeLab } from "./serve-lab.ts";

const catalogue = Catalogue.load();
const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 2, 2, 8, 0, 0);

describe("gateway clock against the lab's time downlink", () => {
  let serve: ServeLab | undefined;
  const gateways: Gateway[] = [];

  afterEach(async () => {
    for (const gateway of gateways.splice(0)) await gateway.stop();
    await serve?.stop();
  }, 30_000);

  it("answers only the check-ins whose clock is off, and sets those clocks", async () => {
    const clock = new VirtualClock({ startMs: T0 });
    serve = await ServeLab.start(clock);
    const lab = serve;
    const open = async (gatewayUuid: string, clockOffsetMs: number) => {
      const gateway = await Gateway.open({
        clock,
        rng: new Rng(gatewayUuid),
        catalogue,
        gatewayUuid,
        broker: { url: lab.info.mqtt_url, ...(await lab.gatewayCredentials(gatewayUuid)) },
        ble: new DirectBle(new DirectRadio()),
        link: { profile: STEADY_LINK_PROFILE },
        clockOffsetMs,
      });
      gateways.push(gateway);
      await gateway.start();
      return gateway;
    };
    const right = await open("A1B2C3D4E5F6", 0);
    const ahead = await open("0A0B0C0D0E0F", HOUR);

    const settle = async () => {
      for (const g of gateways) await g.modem.session.settled();
    };
    /** Steps the Clock a virtual second at a time until `done`, or fails after 20 wall seconds. */
    const until = async (done: () => boolean, what: string) => {
      const deadline = performance.now() + 20_000;
      while (!done()) {
        if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await clock.run({ until: clock.now() + 1000 });
        await settle();
      }
    };

    // Connection check-ins: the clock an hour ahead is set; the right one hears nothing.
    await until(() => ahead.stats.clockCorrections === 1, "the clock an hour ahead set");
    expect(Math.abs(ahead.gatewayClock.now() - clock.now())).toBeLessThanOrEqual(1000);
    expect(ahead.stats.downlinks.time).toBe(1);

    // Four periodic check-ins each, all with clocks that agree with the service's.
    const checkins = right.stats.checkins;
    await until(
      () => right.stats.checkins >= checkins + 4 && ahead.stats.checkins >= checkins + 4,
      "four more check-ins each",
    );
    expect(clock.now()).toBeGreaterThanOrEqual(T0 + 4 * CHECKIN_EVERY_MS);

    // The right gateway's clock jumps 10 minutes back (a reset): its next check-in is answered.
    // Answers go out in check-in order, so by then the earlier ones were weighed, and unanswered.
    right.gatewayClock.set(clock.now() - 10 * 60_000);
    await until(() => right.stats.clockCorrections === 1, "the reset clock set");
    // Set to the service's time when it answered, a clock step (1 s) or less ago.
    expect(Math.abs(right.gatewayClock.now() - clock.now())).toBeLessThanOrEqual(1000);
    expect(right.stats.downlinks.time).toBe(1);
    expect(ahead.stats.downlinks.time).toBe(1);
    expect(ahead.stats.clockCorrections).toBe(1);
    expect(right.stats.checkins).toBeGreaterThanOrEqual(6);
  });
});
