/**
 * The modem's store-and-forward and a fleet of direct-cellular devices:
 * - outbox: items queued per second (memory, and one SQLite file: durable once enqueue returns),
 *   and items drained per second in batches of 256 (take + remove);
 * - fleet: N cellular BPMs (memory outboxes) on one virtual Clock against the embedded broker
 *   (no ingestion, so only the device side is timed): readings acknowledged per second, and heap
 *   per device.
 * Figures depend on the machine's load: run `uptime` beside them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { CellularDevice } from "../../src/cellular/device.ts";
import { STEADY_LINK_PROFILE } from "../../src/cellular/link.ts";
import { openOutbox } from "../../src/cellular/outbox.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { createBroker } from "../../src/mqtt/broker.ts";
import { generateReadings } from "../../src/readings/generate.ts";
import { PatientModels } from "../../src/readings/patients.ts";

const START = Date.UTC(2026, 0, 1);
const ITEMS = 20_000;
const item = {
  receivedAt: START,
  sequence: 1,
  values: [{ uuid: "2A35", b64: "HoAAUgBdAOoHAQEIAAAAXwA=" }],
};
const seconds = (from: bigint) => Number(process.hrtime.bigint() - from) / 1e9;
const rate = (n: number, s: number) => Math.round(n / s).toLocaleString("en");

async function outboxFigures(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "rpmlab-bench-outbox-"));
  try {
    for (const where of ["memory", "disk"] as const) {
      const clock = new VirtualClock({ startMs: START });
      const outbox = await openOutbox<typeof item>({
        clock,
        rng: new Rng("bench-outbox"),
        capacity: ITEMS,
        name: "bench",
        ...(where === "disk" ? { dir } : {}),
      });
      let t = process.hrtime.bigint();
      for (let i = 0; i < ITEMS; i++) outbox.enqueue(item);
      const queued = seconds(t);
      t = process.hrtime.bigint();
      let drained = 0;
      for (let batch = outbox.take(); batch !== null; batch = outbox.take()) {
        drained += outbox.remove(batch);
      }
      const took = seconds(t);
      outbox.close();
      process.stdout.write(
        `outbox ${where.padEnd(6)} ${rate(ITEMS, queued).padStart(9)} enqueued/s   ${rate(drained, took).padStart(9)} drained/s (batches of 256)\n`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function fleetFigures(devices: number, days: number): Promise<void> {
  const profile = Catalogue.load().get("Vendor Cellular BPM");
  const patient = PatientModels.load().get("normal");
  const broker = createBroker("embedded:0");
  await broker.start();
  const clock = new VirtualClock({ startMs: START });
  const heapBefore = process.memoryUsage().heapUsed;
  const fleet: CellularDevice[] = [];
  let readings = 0;
  for (let i = 0; i < devices; i++) {
    const rng = new Rng("bench").fork(`device:${i}`);
    const list = generateReadings({
      devices: [profile],
      patient,
      rng: rng.fork("readings"),
      start: START,
      days,
      duplicateRate: 0,
    });
    readings += list.length;
    fleet.push(
      await CellularDevice.open({
        profile,
        clock,
        rng,
        readings: list,
        broker: { url: broker.url },
        link: { profile: STEADY_LINK_PROFILE },
      }),
    );
  }
  const t = process.hrtime.bigint();
  await Promise.all(fleet.map((d) => d.start()));
  const heapPerDevice = (process.memoryUsage().heapUsed - heapBefore) / devices;
  const sent = () => fleet.reduce((n, d) => n + d.stats.sent, 0);
  // The Clock runs through the days as fast as it can while the modems publish over real
  // sockets; then it steps a minute at a time until the last acknowledgements are in.
  let events = await clock.run({ until: START + days * 86_400_000 });
  for (let m = 0; sent() < readings && m < 7 * 24 * 60; m++) {
    await Promise.all(fleet.map((d) => d.modem.drainer.settled()));
    events += await clock.run({ until: clock.now() + 60_000 });
  }
  const took = seconds(t);
  for (const d of fleet) await d.stop();
  await broker.stop();
  process.stdout.write(
    `fleet  ${devices} cellular BPMs × ${days} days: ${sent()}/${readings} readings acknowledged, ${rate(sent(), took)} readings/s in ${took.toFixed(2)} s, ${events} Clock events (${rate(events, took)}/s), ${(heapPerDevice / 1024).toFixed(0)} KiB heap per connected device\n`,
  );
}

await outboxFigures();
await fleetFigures(200, 7);
