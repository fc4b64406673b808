/**
 * A gateway whose disk fails under it. A state file that cannot be written (a full disk, a path
 * taken by a directory): the whitelist the service sends is still held and enforced, the
 * failure is reported naming the file, and the process goes on (the service sends the
 * whitelist again at the next check-in that does not match). An outbox that refuses a reading:
 * reported, and the device's last sequence is not kept, so its records are asked for again.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MqttClient } from "mqtt";
import { afterEach, describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { STEADY_LINK_PROFILE } from "../../src/cellular/link.ts";
import { RpmlabError } from "../../src/core/errors.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { DirectDevice, DirectRadio } from "../../src/devices/direct-device.ts";
import { Gateway } from "../../src/gateway/gateway.ts";
import { DirectBle } from "../../src/gateway/gateway-ble.ts";
import { createBroker } from "../../src/mqtt/broker.ts";
import { connectClient, subscribeAll } from "../../src/mqtt/client.ts";
import { encodePayload } from "../../src/mqtt/payload.ts";
import { topicOf } from "../../src/mqtt/topics.ts";
import { readingsFor } from "../ble/support/lab.ts";
import { Inbox } from "../mqtt/helpers.ts";

const GW = "D0D1D2D3D4D6";

describe("gateway state that cannot be saved", () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("holds the whitelist it was sent and reports the state file it could not write", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rpmlab-gw-state-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    // The state is written to {file}.tmp and renamed: a directory there makes every write fail.
    mkdirSync(join(dir, `${GW}.state.json.tmp`));
    const broker = createBroker("embedded:0");
    await broker.start();
    cleanups.push(() => broker.stop());
    const service: MqttClient = await connectClient(broker.url, { clientId: "svc", clean: true });
    cleanups.push(() => service.endAsync());
    const statuses = new Inbox(service);
    await subscribeAll(service, [topicOf("gw/status", GW)]);
    const gateway = await Gateway.open({
      clock: new VirtualClock({ startMs: Date.UTC(2026, 6, 1) }),
      rng: new Rng("state-faults"),
      catalogue: Catalogue.load(),
      gatewayUuid: GW,
      broker: { url: broker.url },
      ble: new DirectBle(new DirectRadio()),
      link: { profile: STEADY_LINK_PROFILE },
      outbox: { dir },
    });
    const unsaved: RpmlabError[] = [];
    gateway.events.on("stateNotSaved", ({ error }) => unsaved.push(error));
    await gateway.start();
    cleanups.push(() => gateway.stop());
    await statuses.count(1, "the first check-in");
    await service.publishAsync(
      topicOf("gw/down", GW),
      encodePayload("gw/down", {
        v: 1,
        type: "whitelist",
        devices: [{ mac_address: "C00000000001", sensor_code: "10", whitelist_status: "RE" }],
      }),
      { qos: 1 },
    );
    // The gateway acknowledges what it now holds with a check-in.
    await statuses.count(2, "the acknowledgement");
    expect(gateway.rules.list().map((d) => d.mac)).toEqual(["C00000000001"]);
    expect(unsaved).toHaveLength(1);
    expect(unsaved[0]!.code).toBe("E_OUTBOX_UNAVAILABLE");
    expect(unsaved[0]!.message).toContain(`${GW}.state.json`);
  });

  it("a reading the outbox refuses is reported and its records are not marked relayed", async () => {
    const catalogue = Catalogue.load();
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 6, 1) });
    const broker = createBroker("embedded:0");
    await broker.start();
    cleanups.push(() => broker.stop());
    const service: MqttClient = await connectClient(broker.url, { clientId: "svc", clean: true });
    cleanups.push(() => service.endAsync());
    const radio = new DirectRadio();
    const gateway = await Gateway.open({
      clock,
      rng: new Rng("state-faults"),
      catalogue,
      gatewayUuid: GW,
      broker: { url: broker.url },
      ble: new DirectBle(radio),
      link: { profile: STEADY_LINK_PROFILE },
    });
    await gateway.start();
    cleanups.push(() => gateway.stop());
    const profile = catalogue.profiles.find((p) => p.connectivity === "gateway")!;
    const device = new DirectDevice(
      { profile, clock, serial: "SN1", address: "C00000000001" },
      radio,
    );
    await device.take(readingsFor(profile, "refused", 1)[0]!);
    // The disk is full from here: every enqueue fails as SqliteOutbox's does.
    gateway.modem.outbox.enqueue = () => {
      throw new RpmlabError("E_OUTBOX_UNAVAILABLE", "cannot write to the outbox: disk full", {
        field: "outbox",
      });
    };
    const refused: { address: string; code: string }[] = [];
    gateway.events.on("readingNotQueued", ({ address, error }) =>
      refused.push({ address, code: error.code }),
    );
    const visited = new Promise<void>((resolve) => gateway.events.once("session", () => resolve()));
    await service.publishAsync(
      topicOf("gw/down", GW),
      encodePayload("gw/down", {
        v: 1,
        type: "whitelist",
        devices: [
          {
            mac_address: "C00000000001",
            sensor_code: profile.sensor_code!,
            whitelist_status: "RE",
          },
        ],
      }),
      { qos: 1 },
    );
    let ended = false;
    void visited.then(() => {
      ended = true;
    });
    const deadline = performance.now() + 10_000;
    while (!ended && performance.now() < deadline) {
      await clock.run({ until: clock.now() + 1000 });
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(ended).toBe(true);
    expect(refused[0]).toEqual({ address: "C00000000001", code: "E_OUTBOX_UNAVAILABLE" });
    expect(gateway.stats.readings).toBe(0);
    expect(gateway.lastSequenceOf("C00000000001")).toBeUndefined();
  });
});
