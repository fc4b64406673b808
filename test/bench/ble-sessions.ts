/**
 * Full device sessions per second with unmodified noble and bleno on the virtual controller:
 * connect → discover → set time → subscribe → read stored records through RACP → disconnect.
 * Several centrals (a real gateway makes one connection at a time) each cycle through their
 * glucometers. Prints figures; asserts nothing.
 */
import { performance } from "node:perf_hooks";
import { runSession } from "../../src/gateway/ble-session.ts";
import { generateReadings } from "../../src/readings/generate.ts";
import { PatientModels } from "../../src/readings/patients.ts";
import { catalogue, clock, load, startCentral, startDevice } from "./_ble-rig.ts";

const CENTRALS = 4;
const DEVICES_PER_CENTRAL = 4;
const STORED = 5;
const SECONDS = 10;

const profile = catalogue.get("Vendor Glucometer");
const model = PatientModels.load().models[0]!;
const readings = generateReadings({
  devices: [profile],
  patient: model,
  rng: new (await import("../../src/core/rng.ts")).Rng("s"),
  days: 10,
  duplicateRate: 0,
});

const fleets: Array<{ central: Awaited<ReturnType<typeof startCentral>>; ids: string[] }> = [];
for (let c = 0; c < CENTRALS; c++) {
  const devices = [];
  for (let d = 0; d < DEVICES_PER_CENTRAL; d++) {
    const dev = await startDevice(profile, `G${c}D${d}`.padEnd(8, "0"));
    for (const g of readings.slice(0, STORED))
      await dev.device.measure({
        timestamp: g.timestamp,
        timezone_offset: g.timezone_offset,
        records: g.records,
      });
    devices.push(dev);
  }
  const central = await startCentral(`central-${c}`);
  const wanted = new Set(devices.map((d) => d.peripheral.address));
  const ids: string[] = [];
  await new Promise<void>((resolve) => {
    let stop: (() => Promise<void>) | undefined;
    void central
      .startScan([], (adv) => {
        if (!wanted.delete(adv.address)) return;
        ids.push(adv.id);
        if (wanted.size === 0) void stop?.().then(resolve);
      })
      .then((s) => {
        stop = s;
      });
  });
  fleets.push({ central, ids });
}

let sessions = 0;
let failures = 0;
let records = 0;
const deadline = performance.now() + SECONDS * 1000;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await Promise.all(
  fleets.map(async ({ central, ids }) => {
    for (let i = 0; performance.now() < deadline; i++) {
      try {
        const link = await central.connect(ids[i % ids.length]!);
        const result = await runSession(link, {
          clock,
          sensorCode: "12",
          lastSequence: undefined,
          onValue: () => undefined,
        });
        records += result.stored;
        sessions++;
      } catch {
        failures++;
      }
    }
  }),
);
const seconds = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
console.log(
  `${sessions} full sessions in ${seconds.toFixed(1)} s: ${(sessions / seconds).toFixed(1)} sessions/s ` +
    `(${CENTRALS} centrals × ${DEVICES_PER_CENTRAL} glucometers, ${STORED} stored records each via RACP; ` +
    `${records} values, ${failures} failures); CPU ${((cpu.user + cpu.system) / 1000 / sessions).toFixed(1)} ms per session; ${load()}`,
);
for (const { central } of fleets) central.quiesce();
process.exit(0);
