import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type FulfilmentConfig, fulfilmentConfig } from "../../src/config/fulfilment-config.ts";
import { TypedEvents } from "../../src/core/events.ts";
import type { Logger } from "../../src/core/logger.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import type { FulfilmentEvents } from "../../src/fulfilment/events.ts";
import { createDeviceServices } from "../../src/fulfilment/services.ts";
import { FulfilmentSimulator } from "../../src/fulfilment/simulator.ts";
import { openStore } from "../../src/store/open.ts";
import type { Store } from "../../src/store/store.ts";
import { postgresHarness } from "../support/postgres.ts";
import { catalogue, DAY, T0 } from "./env.ts";

/**
 * Issue 4 §2 and the lead's constraint 1: a seed reproduces every shipment's path and timing
 * byte for byte; a restart loses nothing (due transitions apply at once, in order).
 */

/** Probabilities high enough that a handful of orders take every branch. */
const BUSY = {
  probabilities: { stock_shortage: 0.3, delivery_issue: 0.3, carrier_hold: 0.2 },
  durations: { duplicate_cleanup: "2d" },
};

interface MiniLab {
  readonly store: Store;
  readonly clock: VirtualClock;
  readonly sim: FulfilmentSimulator;
  readonly timeline: string[];
  readonly services: ReturnType<typeof createDeviceServices>;
  readonly events: TypedEvents<FulfilmentEvents>;
  readonly fulfilment: FulfilmentConfig;
}

const open: MiniLab[] = [];
const pgh = await postgresHarness("fulfilment simulator restart on PostgreSQL");

type Opener = (spec: string, deps: { clock: VirtualClock; rng: Rng }) => Promise<Store>;

async function miniLab(
  spec: string,
  clock: VirtualClock,
  seed: string,
  timeline: string[] = [],
  opener: Opener = openStore,
  resyncMs = 0,
  settings: unknown = BUSY,
) {
  const store = await opener(spec, { clock, rng: new Rng("sim-test") });
  const events = new TypedEvents<FulfilmentEvents>();
  events.on("fulfilment.status", (e) =>
    timeline.push(`${e.at} ${e.device.id} ${e.status} ${e.device.hardwareUuid} ${e.trackingLink}`),
  );
  events.on("replacement.status", (e) =>
    // updated_on of its special-order webhook (spec 6.2) too: the transition's time.
    timeline.push(`${e.at} ${e.replacement.id} R:${e.status} updated ${e.replacement.modified}`),
  );
  events.on("hardware.delivered", (e) => timeline.push(`${e.at} ${e.orderId} handed ${e.via}`));
  const fulfilment = fulfilmentConfig(settings, { seed });
  const services = createDeviceServices({
    store,
    catalogue,
    clock,
    events,
    rng: new Rng("sim-test"),
    fulfilment,
  });
  const sim = new FulfilmentSimulator({ store, catalogue, clock, events, fulfilment, resyncMs });
  const lab = { store, clock, sim, timeline, services, events, fulfilment };
  open.push(lab);
  return lab;
}

async function closeLab(lab: MiniLab) {
  await lab.sim.stop();
  await lab.store.close();
  open.splice(open.indexOf(lab), 1);
}

async function drive(lab: MiniLab, until: number) {
  await lab.sim.whenIdle();
  for (;;) {
    const next = lab.sim.nextDue();
    if (next === undefined || next > until) break;
    lab.clock.runSync({ until: Math.max(next, lab.clock.now()) });
    await lab.sim.whenIdle();
  }
  lab.clock.runSync({ until });
}

/** An account with one patient at a verified address, and a Vendor Scale ordered for them. */
async function orderScale(
  store: Store,
  activation: MiniLab["services"]["activation"],
  clientDomain: string,
) {
  const account = await store.accounts.create({ clientDomain, environment: "development" });
  await store.patients.create(account.id, {
    externalId: "P",
    address: "12 Main Street",
    city: "Irvine",
    state: "CA",
    zipCode: "92614",
    addressStatus: "Verified",
  });
  const { device } = await activation.activate(account.id, {
    device: { name: "Vendor Scale" },
    patient: { external_id: "P" },
  });
  return { account, device };
}

/** Ten orders of every kind, placed an hour apart. */
async function placeOrders(lab: MiniLab): Promise<void> {
  const account = await lab.store.accounts.create({
    clientDomain: "clinic",
    environment: "development",
  });
  const a = account.id;
  const names = ["Vendor BPM - S", "Vendor Scale", "Vendor Pulse Ox", "Vendor Glucometer"];
  for (let i = 0; i < 8; i++) {
    await lab.store.patients.create(a, {
      externalId: `P-${i}`,
      name: `Patient ${i}`,
      address: `${10 + i} Main Street`,
      city: "Irvine",
      state: "CA",
      zipCode: "92614",
      addressStatus: "Verified",
    });
    await lab.services.activation.activate(a, {
      device: { name: names[i % names.length] },
      patient: { external_id: `P-${i}` },
      require_signature: i % 3 === 0,
    });
    lab.clock.runSync({ until: lab.clock.now() + 3_600_000 });
  }
  // A duplicate (cleaned up) and a replacement.
  await lab.services.activation.activate(a, {
    device: { name: names[0] },
    patient: { external_id: "P-0" },
  });
  await lab.store.gateways.updateStatus("297056120BD7", { lastSignalStrength: 20 });
  const { device } = await lab.services.activation.activate(a, {
    device: { name: "Vendor Scale", hardware_uuid: "297056120BD7" },
  });
  await lab.services.replacements.create(a, {
    hwi_device_id: device.id,
    device_types: [{ name: "Gateway" }],
  });
}

describe("fulfilment simulator", () => {
  afterEach(async () => {
    for (const lab of [...open]) await closeLab(lab);
  });

  it("reproduces every shipment's path and timing from the seed, byte for byte", async () => {
    const run = async (seed: string) => {
      const lab = await miniLab("memory", new VirtualClock({ startMs: T0 }), seed);
      await lab.sim.start();
      await placeOrders(lab);
      await drive(lab, T0 + 60 * DAY);
      await closeLab(lab);
      return lab.timeline;
    };
    const first = await run("seed-a");
    const again = await run("seed-a");
    const other = await run("seed-b");
    expect(first.length).toBeGreaterThan(60);
    expect(again.join("\n")).toBe(first.join("\n"));
    expect(other.join("\n")).not.toBe(first.join("\n"));
    // The busy settings reach every status of spec 3 the simulator makes on its own.
    const seen = new Set(first.map((line) => line.split(" ").slice(2).join(" ")));
    for (const status of [
      "On Hold",
      "Ready to Ship",
      "Dropshipped",
      "In Transit",
      "Out for Delivery",
      "Delivery Issue",
      "Available for Pickup",
      "Delivered",
      "Client Action Required",
      "Cancelled",
      "Replaced",
    ]) {
      expect(
        [...seen].some((s) => s.startsWith(`${status} `)),
        status,
      ).toBe(true);
    }
  });

  const restarts: Array<{
    name: string;
    spec: () => Promise<string>;
    opener?: Opener;
    done?: () => Promise<void>;
  }> = [];
  let dir: string | undefined;
  restarts.push({
    name: "SQLite file",
    spec: async () => {
      dir = mkdtempSync(join(tmpdir(), "rpmlab-sim-"));
      return `sqlite:${join(dir, "lab.db")}`;
    },
    done: async () => {
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    },
  });
  if (pgh !== undefined) {
    let schema = "";
    afterAll(() => pgh.close());
    restarts.push({
      name: "PostgreSQL",
      spec: async () => {
        const next = pgh.nextSpec();
        schema = next.schema;
        return next.spec;
      },
      // Migrations of parallel workers clash unless run under the harness's lock.
      opener: (spec, deps) => pgh.locked(() => openStore(spec, deps)),
      done: () => pgh.dropSchema(schema),
    });
  }

  for (const variant of restarts) {
    it(`resumes after a restart on ${variant.name}: what fell due while down applies at once, in order`, async () => {
      const spec = await variant.spec();
      try {
        // The same orders, once without interruption (the reference timeline)…
        const reference = await miniLab("memory", new VirtualClock({ startMs: T0 }), "restart");
        await reference.sim.start();
        await placeOrders(reference);
        await drive(reference, T0 + 60 * DAY);
        await closeLab(reference);

        // …and once with the lab down from day 3 to day 9.
        const clock = new VirtualClock({ startMs: T0 });
        const timeline: string[] = [];
        const before = await miniLab(spec, clock, "restart", timeline, variant.opener);
        await before.sim.start();
        await placeOrders(before);
        await drive(before, T0 + 3 * DAY);
        const beforeRestart = timeline.length;
        await closeLab(before);
        clock.runSync({ until: T0 + 9 * DAY });

        const after = await miniLab(spec, clock, "restart", timeline, variant.opener);
        await after.sim.start();
        const caughtUp = timeline.slice(beforeRestart);
        expect(caughtUp.length).toBeGreaterThan(0);
        const times = caughtUp.map((line) => Number(line.split(" ")[0]));
        expect(times).toEqual([...times].sort((x, y) => x - y));
        expect(times.every((t) => t <= T0 + 9 * DAY)).toBe(true);
        expect(after.sim.armed).toBeGreaterThan(0);
        // An order caught up was updated when its last step was due, not at the restart.
        for (const order of (await after.services.orders.list({})).rows) {
          expect(order.updated_on, order.id).toBe(order.history.at(-1)?.at);
        }
        await drive(after, T0 + 60 * DAY);
        expect(timeline.join("\n")).toBe(reference.timeline.join("\n"));
      } finally {
        for (const lab of [...open]) await closeLab(lab);
        await variant.done?.();
      }
    }, 60_000);
  }
  it("ships boxes due at the same instant in the same order whether the lab restarted or not", async () => {
    // A fixed processing time (gateway-replacement.yaml's 1d) and one patient's kit ordered in
    // one go: the three boxes fall due together, and the first to ship takes the new gateway
    // the others join. Which one that is must not depend on the simulator's history.
    const settings = {
      probabilities: { stock_shortage: 0, delivery_issue: 0, carrier_hold: 0 },
      durations: { processing: "1d" },
    };
    const run = async (restart: boolean) => {
      const clock = new VirtualClock({ startMs: T0 });
      const lab = await miniLab("memory", clock, "ties", [], openStore, 0, settings);
      await lab.sim.start();
      const account = await lab.store.accounts.create({
        clientDomain: "clinic",
        environment: "development",
      });
      // Kits for a few patients: the boxes' ids (which order they sort in) are seeded too.
      for (const patient of ["P-1", "P-2", "P-3"]) {
        await lab.store.patients.create(account.id, {
          externalId: patient,
          name: patient,
          address: "12 Main Street",
          city: "Irvine",
          state: "CA",
          zipCode: "92614",
          addressStatus: "Verified",
        });
        for (const name of ["Vendor BPM - S", "Vendor Scale", "Vendor Pulse Ox"]) {
          await lab.services.activation.activate(account.id, {
            device: { name },
            patient: { external_id: patient },
          });
        }
      }
      let sim = lab.sim;
      if (restart) {
        await sim.stop();
        sim = new FulfilmentSimulator({
          ...lab,
          catalogue,
          events: lab.events,
          fulfilment: lab.fulfilment,
        });
        await sim.start();
      }
      await drive({ ...lab, sim }, T0 + 20 * DAY);
      await sim.stop();
      return lab.timeline.filter((line) => line.includes(" Dropshipped "));
    };
    const uninterrupted = await run(false);
    expect(uninterrupted).toHaveLength(9);
    expect(await run(true)).toEqual(uninterrupted);
  });
});

describe("fulfilment simulator, several processes on one store", () => {
  let dir: string | undefined;
  afterEach(async () => {
    for (const lab of [...open]) await closeLab(lab);
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  /** Runs every Clock timer due by `until`, letting the simulator finish each one's work. */
  async function driveClock(lab: MiniLab, until: number) {
    for (;;) {
      await lab.sim.whenIdle();
      const next = lab.clock.nextEventAt();
      if (next === undefined || next > until) break;
      lab.clock.runSync({ until: Math.max(next, lab.clock.now()) });
    }
    lab.clock.runSync({ until });
  }

  it("ships what another process scheduled, while that process is down", async () => {
    dir = mkdtempSync(join(tmpdir(), "rpmlab-sim-"));
    const spec = `sqlite:${join(dir, "lab.db")}`;
    const clock = new VirtualClock({ startMs: T0 });
    const timeline: string[] = [];
    // B runs all along; A takes the orders through its API, then stops before any ships.
    const b = await miniLab(spec, clock, "shared", timeline, openStore, 3_600_000);
    await b.sim.start();
    const a = await miniLab(spec, clock, "shared", timeline);
    await placeOrders(a);
    await closeLab(a);
    await driveClock(b, T0 + 60 * DAY);

    // The reference: one process on a store opened once before (its ids, which seed each
    // shipment's path, come from the store's second opening, as A's did).
    const referenceSpec = `sqlite:${join(dir, "reference.db")}`;
    const referenceClock = new VirtualClock({ startMs: T0 });
    await (
      await openStore(referenceSpec, { clock: referenceClock, rng: new Rng("sim-test") })
    ).close();
    const reference = await miniLab(referenceSpec, referenceClock, "shared");
    await reference.sim.start();
    await placeOrders(reference);
    await drive(reference, T0 + 60 * DAY);
    expect(timeline.length).toBeGreaterThan(60);
    expect(timeline.join("\n")).toBe(reference.timeline.join("\n"));
  });
  it("keeps the step it armed when the schedule it re-reads predates it", async () => {
    // The re-read (resyncMs) takes a moment on a large store; a step applied meanwhile (here an
    // admin's, as a timer's would be) must stay armed, not give way to the step the read saw.
    const clock = new VirtualClock({ startMs: T0 });
    let duringRead: (() => Promise<void>) | undefined;
    const opener: Opener = async (spec, deps) => {
      const store = await openStore(spec, deps);
      const due = store.shipments.due.bind(store.shipments);
      store.shipments.due = async (...args) => {
        const rows = await due(...args);
        const hook = duringRead;
        duringRead = undefined;
        if (args[0] === undefined && hook !== undefined) await hook();
        return rows;
      };
      return store;
    };
    const settings = {
      probabilities: { stock_shortage: 0 },
      durations: { processing: "2d", first_scan: "30m" },
    };
    const lab = await miniLab("memory", clock, "reread", [], opener, 3_600_000, settings);
    await lab.sim.start();
    const { device } = await orderScale(lab.store, lab.services.activation, "clinic");
    duringRead = async () => {
      await lab.services.orders.advance(device.id, { status: "Dropshipped" });
    };
    await driveClock(lab, T0 + 3_600_000);
    const shipped = await lab.services.orders.get(device.id);
    expect(shipped.status).toBe("Dropshipped");
    expect(shipped.next_at).toBe(T0 + 3_600_000 + 1_800_000);
    // The first scan comes on time, not at the next re-read half an hour later.
    await driveClock(lab, T0 + 3_600_000 + 1_800_000);
    expect((await lab.services.orders.get(device.id)).status).toBe("In Transit");
  });
});

describe("fulfilment simulator, when things go wrong", () => {
  afterEach(async () => {
    for (const lab of [...open]) await closeLab(lab);
  });

  it("retries a failed transition, and gives up without crashing when it keeps failing", async () => {
    const clock = new VirtualClock({ startMs: T0 });
    const lab = await miniLab("memory", clock, "retry");
    const failing = { left: 2 };
    const { sim, services, events, errors } = flakySimulator(lab, clock, failing);
    const statuses: string[] = [];
    events.on("fulfilment.status", (e) => statuses.push(`${e.status}@${e.at}`));
    await sim.start();
    const { account, device } = await orderScale(lab.store, services.activation, "c");
    const order = await services.orders.get(device.id);
    await drive({ ...lab, sim }, T0 + 30 * DAY);
    expect(errors).toEqual([
      "fulfilment transition failed; retrying",
      "fulfilment transition failed; retrying",
    ]);
    // Shipped after two retries (1 and 2 minutes later), timed as planned.
    expect(statuses[1]).toBe(`Dropshipped@${order.next_at}`);
    expect(statuses.at(-1)).toMatch(/^Delivered@/);

    failing.left = 100;
    const second = await services.activation.activate(account.id, {
      device: { name: "Vendor Pulse Ox" },
      patient: { external_id: "P" },
    });
    await drive({ ...lab, sim }, T0 + 60 * DAY);
    expect(errors.slice(2)).toEqual([
      "fulfilment transition failed; retrying",
      "fulfilment transition failed; retrying",
      "fulfilment transition failed; retrying",
      "fulfilment transition failed; the order stays where it is until an admin moves it or the lab restarts",
    ]);
    expect((await services.orders.get(second.device.id)).status).toBe("Ready to Ship");
    await sim.stop();
  });

  it("a step that failed and was then moved by an admin leaves the next step its 3 retries", async () => {
    const clock = new VirtualClock({ startMs: T0 });
    const lab = await miniLab("memory", clock, "retry-moved");
    const failing = { left: 1 };
    const { sim, services, errors } = flakySimulator(lab, clock, failing);
    await sim.start();
    const { device } = await orderScale(lab.store, services.activation, "c");
    const order = await services.orders.get(device.id);
    // The first transition fails once; before its retry a minute later, an admin ships it.
    await drive({ ...lab, sim }, order.next_at! + 1);
    expect(errors).toEqual(["fulfilment transition failed; retrying"]);
    await services.orders.advance(device.id, { status: "Dropshipped" });
    await sim.whenIdle();
    failing.left = 100;
    await drive({ ...lab, sim }, T0 + 30 * DAY);
    // The next step is retried 3 times like any other, not 2 (the moved step's failure is
    // no longer counted against it).
    expect(errors.slice(1)).toEqual([
      "fulfilment transition failed; retrying",
      "fulfilment transition failed; retrying",
      "fulfilment transition failed; retrying",
      "fulfilment transition failed; the order stays where it is until an admin moves it or the lab restarts",
    ]);
    await sim.stop();
  });

  it("gives pending orders of a store from before shipments theirs at start", async () => {
    const clock = new VirtualClock({ startMs: T0 });
    const lab = await miniLab("memory", clock, "legacy");
    const account = await lab.store.accounts.create({
      clientDomain: "c",
      environment: "development",
    });
    // As activation wrote a request before migration 0004: a device row, no shipment.
    const device = await lab.store.devices.create(account.id, {
      name: "Vendor Scale",
      sensorCode: "34",
      status: "Ready to Ship",
      metaData: { fulfillment_request: { delivery_type: null, requested: T0, reason: null } },
    });
    await lab.sim.start();
    expect((await lab.services.orders.get(device.id)).status).toBe("Ready to Ship");
    await drive(lab, T0 + 30 * DAY);
    expect((await lab.store.devices.get(account.id, device.id))?.status).toMatch(
      /^(Delivered|Available for Pickup)$/,
    );
  });
});

/**
 * A simulator on `lab` whose shipment updates fail while `failing.left` is above 0 (each failure
 * takes one off), the device services on the lab's own store, and what the simulator logs as
 * errors.
 */
function flakySimulator(
  lab: Awaited<ReturnType<typeof miniLab>>,
  clock: VirtualClock,
  failing: { left: number },
) {
  const errors: string[] = [];
  const flaky: Store = {
    ...lab.store,
    transaction: (fn) =>
      lab.store.transaction((tx) =>
        fn({
          ...tx,
          shipments: {
            ...tx.shipments,
            update: async (...args) => {
              if (failing.left > 0) {
                failing.left--;
                throw new Error("database briefly unreachable");
              }
              return tx.shipments.update(...args);
            },
          },
        }),
      ),
  };
  const events = new TypedEvents<FulfilmentEvents>();
  const fulfilment = fulfilmentConfig({ probabilities: { stock_shortage: 0 } });
  const logger = {
    error: (_obj: unknown, message: string) => errors.push(message),
    info: () => undefined,
  } as unknown as Logger;
  const sim = new FulfilmentSimulator({
    store: flaky,
    catalogue,
    clock,
    events,
    fulfilment,
    logger,
  });
  const services = createDeviceServices({
    store: lab.store,
    catalogue,
    clock,
    events,
    rng: new Rng("x"),
    fulfilment,
  });
  return { sim, services, events, errors };
}
