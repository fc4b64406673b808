/**
 * How many virtual BLE devices one lab process holds: each an unmodified bleno (a fresh module
 * instance) on its own virtual controller, serving its GATT database and advertising every
 * 100 ms; a noble gateway scans until it has seen every one. Prints memory per step; asserts
 * nothing.
 */
import { performance } from "node:perf_hooks";
import { catalogue, load, radio, startCentral, startDevice } from "./_ble-rig.ts";

const STEPS = [50, 200, 400, 1000];
const gateway = catalogue.profiles.filter((p) => p.connectivity === "gateway");
const addresses = new Set<string>();
const mb = (n: number) => `${(n / 2 ** 20).toFixed(0)} MB`;
const base = process.memoryUsage();
const t0 = performance.now();
const devices = [];
for (const target of STEPS) {
  while (devices.length < target) {
    const profile = gateway[devices.length % gateway.length]!;
    const d = await startDevice(profile, `SN${String(devices.length).padStart(6, "0")}`);
    addresses.add(d.peripheral.address);
    devices.push(d);
  }
  const central = await startCentral(`scanner-${target}`);
  const seen = new Set<string>();
  const t1 = performance.now();
  await new Promise<void>((resolve) => {
    let stop: (() => Promise<void>) | undefined;
    void central
      .startScan([], (adv) => {
        if (addresses.has(adv.address)) seen.add(adv.address);
        if (seen.size === addresses.size) void stop?.().then(resolve);
      })
      .then((s) => {
        stop = s;
      });
  });
  central.quiesce();
  global.gc?.();
  const m = process.memoryUsage();
  console.log(
    `${target} devices advertising (${((performance.now() - t0) / 1000).toFixed(1)} s to start): ` +
      `a scan saw all ${seen.size} in ${((performance.now() - t1) / 1000).toFixed(2)} s; ` +
      `RSS ${mb(m.rss)} (+${mb(m.rss - base.rss)}, ${((m.rss - base.rss) / target / 1024).toFixed(0)} KB per device; ` +
      `heap ${mb(m.heapUsed)}); ${load()}`,
  );
}
for (const d of devices) d.peripheral.quiesce();
radio.close();
process.exit(0);
