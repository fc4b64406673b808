/**
 * A gateway that checks in with more devices waiting for it than its whitelist holds (README
 * "Devices": activated before the 64-entry rule), against `rpmlab serve`'s composition: the
 * oldest 64 are adopted, the rest stay Unknown Gateway ID, and each check-in logs the warning
 * `gateway whitelist full: devices left waiting` naming the gateway, the devices and the limit,
 * until a device is unlinked and the one left waiting is adopted.
 */
import { Writable } from "node:stream";
import type mqtt from "mqtt";
import { afterEach, describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { createLogger } from "../../src/core/logger.ts";
import { toIsoMicros } from "../../src/core/time.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { deviceMacAddress } from "../../src/fulfilment/identifiers.ts";
import { WHITELIST_MAX } from "../../src/mqtt/envelope.ts";
import { topicOf } from "../../src/mqtt/topics.ts";
import { openStore } from "../../src/store/open.ts";
import type { Store } from "../../src/store/store.ts";
import type { DeviceRow } from "../../src/store/types.ts";
import { within } from "../mqtt/helpers.ts";
import { ServeLab } from "./serve-lab.ts";

const T0 = Date.UTC(2026, 2, 2, 8, 0, 0);
const GW = "A1B2C3D4E5F6";
const INHALER = "Vendor Inhaler Sensor";
const WARNING = "gateway whitelist full: devices left waiting";

interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly gateway?: string;
  readonly devices?: string[];
  readonly max?: number;
}

/** Log lines as they come, and a wait for the next one that matches. */
class Logs {
  readonly lines: LogLine[] = [];
  private readonly waiters: { match: (l: LogLine) => boolean; resolve: () => void }[] = [];
  readonly destination = new Writable({
    write: (chunk, _encoding, done) => {
      for (const text of String(chunk).split("\n")) {
        if (text === "") continue;
        const line = JSON.parse(text) as LogLine;
        this.lines.push(line);
        for (const w of this.waiters.splice(0)) {
          if (w.match(line)) w.resolve();
          else this.waiters.push(w);
        }
      }
      done();
    },
  });

  warnings(): LogLine[] {
    return this.lines.filter((l) => l.msg === WARNING);
  }

  /** Resolves once `count` warnings were logged; fails after a deadline. */
  async warned(count: number): Promise<LogLine> {
    if (this.warnings().length < count) {
      await within(
        new Promise<void>((resolve) => {
          this.waiters.push({
            match: () => this.warnings().length >= count,
            resolve,
          });
        }),
        `warning ${count}`,
      );
    }
    return this.warnings()[count - 1]!;
  }
}

describe("a gateway whose whitelist is full at check-in", () => {
  let serve: ServeLab | undefined;
  let gateway: mqtt.MqttClient | undefined;

  afterEach(async () => {
    await gateway?.endAsync();
    await serve?.stop();
  }, 30_000);

  it("adopts the oldest 64, warns at each check-in about the rest, and adopts them once there is room", async () => {
    const clock = new VirtualClock({ startMs: T0 });
    const logs = new Logs();
    let store: Store | undefined;
    serve = await ServeLab.start(clock, "embedded:0", 0, {
      logger: createLogger({ level: "warn", destination: logs.destination }),
      deps: {
        openStore: async (spec, options) => {
          store = await openStore(spec, options);
          return store;
        },
      },
    });
    const lab = serve;
    const account = (await store!.accounts.getByClientDomain(lab.info.client_domain))!;
    const sensorCode = Catalogue.load().get(INHALER).sensor_code;
    // Devices activated before the rule, a second apart: 65 wait for a gateway that holds 64.
    const waiting: DeviceRow[] = [];
    for (let n = 0; n <= WHITELIST_MAX; n++) {
      waiting.push(
        await store!.devices.create(account.id, {
          name: INHALER,
          sensorCode,
          hardwareUuid: GW,
          sensorId: `SN${String(n).padStart(4, "0")}`,
          status: "Unknown Gateway ID",
        }),
      );
      clock.runSync({ until: clock.now() + 1000 });
    }
    const newest = waiting.at(-1)!;

    gateway = await lab.gatewayClient(GW);
    const whitelists: string[][] = [];
    gateway.on("message", (_topic, payload) => {
      const down = JSON.parse(String(payload)) as {
        type: string;
        devices?: { mac_address: string }[];
      };
      if (down.type === "whitelist") whitelists.push(down.devices!.map((d) => d.mac_address));
    });
    await gateway.subscribeAsync(topicOf("gw/down", GW), { qos: 1 });
    const checkIn = () =>
      gateway!.publishAsync(
        topicOf("gw/status", GW),
        JSON.stringify({
          v: 1,
          online: true,
          signal_strength: 20,
          firmware_version: "1.0.0",
          bootloader_version: "1.0.0",
          provisioned: true,
          checkin_at: toIsoMicros(clock.now()),
        }),
        { qos: 1, retain: true },
      );

    // First check-in: 64 adopted, the newest left waiting and named in the warning.
    await checkIn();
    const first = await logs.warned(1);
    expect(first).toMatchObject({
      level: 40,
      msg: WARNING,
      gateway: GW,
      devices: [newest.id],
      max: WHITELIST_MAX,
    });
    const status = async (id: string) =>
      (await lab.hwi<{ status: string }>("GET", `hwi-devices/${id}/`)).body.status;
    expect(await status(newest.id)).toBe("Unknown Gateway ID");
    expect(await status(waiting[0]!.id)).toBe("Active");
    expect(await store!.whitelist.list(GW)).toHaveLength(WHITELIST_MAX);

    // Each check-in while it waits says so again.
    await checkIn();
    expect(await logs.warned(2)).toMatchObject({ gateway: GW, devices: [newest.id] });

    // One device unlinked: the next check-in adopts the one that waited, and warns no more.
    const unlinked = await lab.hwi("POST", `unlink-gateway/${waiting[0]!.id}/`);
    expect(unlinked.status).toBe(200);
    const newestMac = deviceMacAddress(newest.id);
    await checkIn();
    await within(
      new Promise<void>((resolve) => {
        const look = () => {
          if (whitelists.some((macs) => macs.includes(newestMac))) resolve();
          else gateway!.once("message", look);
        };
        look();
      }),
      "a whitelist with the device that waited",
    );
    expect(await status(newest.id)).toBe("Active");
    expect(logs.warnings()).toHaveLength(2);
    expect(whitelists.every((macs) => macs.length <= WHITELIST_MAX)).toBe(true);
  }, 60_000);
});
