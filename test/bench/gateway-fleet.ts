/**
 * A fleet on the direct path (`--ble direct`): G simulated gateways with D virtual devices each
 * (every gateway-connected profile in turn), three days of readings on a virtual Clock, through
 * the embedded broker into the ingestion core (memory store). Each device is the same BleDevice
 * bleno serves, visited by the gateway's session through a DirectLink; each gateway has its own
 * MQTT session, outbox and check-ins. Prints readings relayed and stored, wall and CPU time,
 * memory; asserts nothing.
 */
import { performance } from "node:perf_hooks";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { STEADY_LINK_PROFILE } from "../../src/cellular/link.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { DirectDevice, DirectRadio } from "../../src/devices/direct-device.ts";
import { Gateway } from "../../src/gateway/gateway.ts";
import { DirectBle } from "../../src/gateway/gateway-ble.ts";
import { Ingestor } from "../../src/ingest/ingestor.ts";
import { BrokerTap } from "../../src/ingest/sources/broker-tap.ts";
import { createBroker } from "../../src/mqtt/broker.ts";
import { encodePayload } from "../../src/mqtt/payload.ts";
import { topicOf } from "../../src/mqtt/topics.ts";
import { generateReadings } from "../../src/readings/generate.ts";
import { PatientModels } from "../../src/readings/patients.ts";
import { openStore } from "../../src/store/open.ts";

const FLEETS: [gateways: number, devicesEach: number][] = [
  [20, 10],
  [100, 10],
];
const DAYS = 3;
const HOUR = 3_600_000;
const catalogue = Catalogue.load();
const patients = PatientModels.load();
const profiles = catalogue.profiles.filter((p) => p.connectivity === "gateway");
const mb = (n: number) => `${(n / 2 ** 20).toFixed(0)} MB`;

for (const [gatewayCount, devicesEach] of FLEETS) {
  const T0 = Date.UTC(2026, 0, 5, 0, 0, 0);
  const clock = new VirtualClock({ startMs: T0 });
  const store = await openStore("memory", { clock, rng: new Rng("fleet") });
  const broker = createBroker("embedded:0");
  await broker.start();
  const ingestor = new Ingestor({ source: BrokerTap.of(broker)!, store, catalogue, clock });
  await ingestor.start();
  let stored = 0;
  ingestor.events.on("measurement.stored", ({ rows }) => {
    stored += rows.length;
  });

  const gateways: Gateway[] = [];
  let taken = 0;
  for (let g = 0; g < gatewayCount; g++) {
    const uuid = `F0${g.toString(16).toUpperCase().padStart(10, "0")}`;
    const radio = new DirectRadio();
    const devices: { mac: string; code: string; serial: string }[] = [];
    for (let d = 0; d < devicesEach; d++) {
      const profile = profiles[(g + d) % profiles.length]!;
      // One device per sensor code on a gateway (spec 2.8): skip a code already there.
      if (devices.some((x) => x.code === profile.sensor_code)) continue;
      const mac =
        `C0${g.toString(16).padStart(6, "0")}${d.toString(16).padStart(4, "0")}`.toUpperCase();
      const serial = `IN${g.toString().padStart(4, "0")}${d}`;
      const device = new DirectDevice({ profile, clock, serial, address: mac }, radio);
      devices.push({ mac, code: profile.sensor_code!, serial });
      for (const r of generateReadings({
        devices: [profile],
        patient: patients.get(profile.family === "fetal_doppler" ? "pregnancy" : "copd"),
        rng: new Rng(`fleet/${mac}`),
        start: T0 + HOUR,
        days: DAYS,
        duplicateRate: 0,
        settings: { [profile.name]: { serialNumber: serial } },
      })) {
        taken++;
        clock.schedule(r.timestamp, () => void device.take(r));
      }
    }
    const gateway = await Gateway.open({
      clock,
      rng: new Rng(`fleet/${uuid}`),
      catalogue,
      gatewayUuid: uuid,
      broker: { url: broker.url },
      ble: new DirectBle(radio),
      link: { profile: STEADY_LINK_PROFILE },
      lingerMs: 0,
    });
    await gateway.start();
    gateways.push(gateway);
    // The service's whitelist, straight into the broker.
    await broker.publish!(
      topicOf("gw/down", uuid),
      encodePayload("gw/down", {
        v: 1,
        type: "whitelist",
        devices: devices.map((d) => ({
          mac_address: d.mac,
          sensor_code: d.code,
          ...(d.code === "25" ? { sensor_id: d.serial } : {}),
          whitelist_status: "RE" as const,
        })),
      }),
    );
  }

  const settle = () => Promise.all(gateways.map((g) => g.modem.drainer.settled()));
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let t = clock.now(); t < T0 + (DAYS + 1) * 24 * HOUR; t += HOUR / 4) {
    await clock.run({ until: t });
    await settle();
  }
  for (let i = 0; i < 50 && gateways.some((g) => g.stats.outbox.queued > 0); i++) {
    await clock.run({ until: clock.now() + 60_000 });
    await settle();
  }
  while (ingestor.pending > 0) await new Promise((r) => setImmediate(r));
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const relayed = gateways.reduce((n, g) => n + g.stats.readings, 0);
  const sessions = gateways.reduce((n, g) => n + g.stats.sessions, 0);
  const queued = gateways.reduce((n, g) => n + g.stats.outbox.queued, 0);
  const devices = gateways.reduce((n, g) => n + g.rules.list().length, 0);
  global.gc?.();
  console.log(
    `${gatewayCount} gateways, ${devices} devices, ${DAYS} days: ${taken} readings taken, ${relayed} relayed in ${sessions} visits, ${stored} records stored, ${queued} still queued; ` +
      `${wall.toFixed(1)} s wall (${(relayed / wall).toFixed(0)} readings/s), CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s, ` +
      `RSS ${mb(process.memoryUsage().rss)}`,
  );
  for (const g of gateways) await g.stop();
  await ingestor.stop();
  await broker.stop();
  await store.close();
}
