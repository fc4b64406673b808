/**
 * A gateway that checks in with more devices waiting for it than its whitelist holds (README
 * "Devices": activated before the 64-entry rule), against `rpmlab serve`'s composition: the
 * oldest 64 are adopted, the rest stay Unknown Gateway ID, and each check-in logs the warning
 * `gateway whitelist full: devices left waiting` naming the gateway, the devices and the limit
 * (not the gateway's last will, which is no check-in), until a device is unlinked and the one
 * left waiting is adopted.
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
const HOUR = 3_600_000;
const INHALER = "Vendor Inhaler Sensor";
const WARNING = "gateway whitelist full: devices left waiting";

interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly gateway?: string;
  readonly devices?: string[];
  readonly max?: number;
}

/** The lab's log lines, as they come. */
class Logs {
  readonly lines: LogLine[] = [];
  readonly destination = new Writable({
    write: (chunk, _encoding, done) => {
      for (const text of String(chunk).split("\n")) {
        if (text !== "") this.lines.push(JSON.parse(text) as LogLine);
      }
      done();
    },
  });

  warnings(): LogLine[] {
    return this.lines.filter((l) => l.msg === WARNING);
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
    const gw = gateway;
    /** The last whitelist downlink, and the check-ins answered (their checkin_at). */
    let whitelist: string[] = [];
    const answeredCheckins: string[] = [];
    gw.on("message", (_topic, payload) => {
      const down = JSON.parse(String(payload)) as {
        type: string;
        devices?: { mac_address: string }[];
        checkin_at?: string;
      };
      if (down.type === "whitelist") whitelist = down.devices!.map((d) => d.mac_address);
      if (down.type === "time") answeredCheckins.push(down.checkin_at!);
    });
    await gw.subscribeAsync(topicOf("gw/down", GW), { qos: 1 });
    /**
     * A check-in, and its answer: each reports a clock an hour slow (a different instant each
     * time), so the lab answers each with a time downlink naming it — after the adoption, its
     * warning and the whitelist (lab-ingest.ts, downlink.ts).
     */
    let checkins = 0;
    const checkIn = async (): Promise<void> => {
      const checkinAt = toIsoMicros(clock.now() - HOUR + ++checkins * 1000);
      const online = {
        v: 1,
        online: true,
        signal_strength: 20,
        firmware_version: "1.0.0",
        bootloader_version: "1.0.0",
        provisioned: true,
        checkin_at: checkinAt,
      };
      await gw.publishAsync(topicOf("gw/status", GW), JSON.stringify(online), {
        qos: 1,
        retain: true,
      });
      await within(
        new Promise<void>((resolve) => {
          const look = () => {
            if (answeredCheckins.includes(checkinAt)) resolve();
            else gw.once("message", look);
          };
          look();
        }),
        `the answer to check-in ${checkins}`,
      );
    };
    const status = async (id: string) =>
      (await lab.hwi<{ status: string }>("GET", `hwi-devices/${id}/`)).body.status;

    // First check-in: the oldest 64 adopted, the newest left waiting and named in the warning.
    await checkIn();
    expect(logs.warnings()).toEqual([
      expect.objectContaining({ level: 40, gateway: GW, devices: [newest.id], max: WHITELIST_MAX }),
    ]);
    expect(await status(newest.id)).toBe("Unknown Gateway ID");
    expect(await status(waiting[0]!.id)).toBe("Active");
    expect(whitelist).toHaveLength(WHITELIST_MAX);
    expect(whitelist).not.toContain(deviceMacAddress(newest.id));

    // Each check-in while it waits says so again.
    await checkIn();
    expect(logs.warnings()).toHaveLength(2);
    expect(logs.warnings()[1]).toMatchObject({ gateway: GW, devices: [newest.id] });

    // Going offline (the gateway's last will) is no check-in: nothing logged for it.
    await gw.publishAsync(topicOf("gw/status", GW), JSON.stringify({ v: 1, online: false }), {
      qos: 1,
      retain: true,
    });
    await checkIn();
    expect(logs.warnings()).toHaveLength(3);

    // One device unlinked: the next check-in adopts the one that waited, and warns no more.
    const unlinked = await lab.hwi("POST", `unlink-gateway/${waiting[0]!.id}/`);
    expect(unlinked.status).toBe(200);
    await checkIn();
    expect(await status(newest.id)).toBe("Active");
    expect(whitelist).toHaveLength(WHITELIST_MAX);
    expect(whitelist).toContain(deviceMacAddress(newest.id));
    expect(logs.warnings()).toHaveLength(3);
  }, 60_000);
});
