import { afterEach, describe, expect, it } from "vitest";
import { fulfilmentConfig } from "../../src/config/fulfilment-config.ts";
import { FulfilmentSimulator } from "../../src/fulfilment/simulator.ts";
import { FULFILMENT_STATUSES } from "../../src/fulfilment/statuses.ts";
import type { WebhookRow } from "../../src/store/types-ingest.ts";
import { catalogue } from "../ingest/fixtures.ts";
import { expectConsumable, WebhookLab } from "./harness.ts";
import { Receiver } from "./receiver.ts";

const DAY = 86_400_000;
const GW = "297056120BD7";
const BPM = "Vendor BPM - Wide Range";
const ADDRESS = { address: "12 Main Street", city: "Irvine", state: "CA", zip_code: "92614" };

interface Run {
  readonly lab: WebhookLab;
  readonly simulator: FulfilmentSimulator;
  readonly receiver: Receiver;
  readonly hook: WebhookRow;
  /** A SPECIAL_ORDER webhook on the same receiver: the replacement's orders. */
  readonly orders: WebhookRow;
}

/**
 * Issue 4 "Done when": every fulfilment status of spec 3 reaches a real receiver as the
 * fulfilment webhook of wire-formats.md, driven by the fulfilment simulator on the lab's clock
 * (and by the client's and the lab admin's calls where a status comes from them), each body as a
 * strict consumer reads it.
 */
describe("every fulfilment status, from the simulator to a real receiver", () => {
  const runs: Run[] = [];
  afterEach(async () => {
    for (const { lab, simulator, receiver } of runs.splice(0)) {
      await simulator.stop();
      await lab.close();
      await receiver.close();
    }
  });

  async function open(probabilities: Record<string, number>): Promise<Run> {
    const fulfilment = fulfilmentConfig({ seed: "statuses", probabilities });
    const lab = await WebhookLab.open({ fulfilment });
    const simulator = new FulfilmentSimulator({
      store: lab.store,
      catalogue,
      clock: lab.clock,
      events: lab.events,
      fulfilment,
    });
    await simulator.start();
    const receiver = await Receiver.start();
    const hook = await lab.webhook({
      endpoint: receiver.url("/fulfillment"),
      event: "FULFILLMENT",
    });
    const orders = await lab.webhook({
      endpoint: receiver.url("/special_order"),
      event: "SPECIAL_ORDER",
    });
    const run = { lab, simulator, receiver, hook, orders };
    runs.push(run);
    return run;
  }

  /** Moves the clock to `until`, letting every transition and delivery of each step finish. */
  async function runFor(run: Run, ms: number): Promise<void> {
    const until = run.lab.clock.now() + ms;
    for (;;) {
      await run.simulator.whenIdle();
      await run.lab.settle();
      const next = run.lab.clock.nextEventAt();
      if (next === undefined || next > until) break;
      run.lab.clock.runSync({ until: next });
    }
    run.lab.clock.runSync({ until });
    await run.simulator.whenIdle();
    await run.lab.settle();
  }

  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies
  const bodies = (run: Run): any[] =>
    expectConsumable(
      run.receiver.received.filter((r) => r.path === "/fulfillment"),
      run.hook,
    );
  /** The replacement order's special-order webhooks, oldest first. */
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies
  const orderBodies = (run: Run): any[] =>
    expectConsumable(
      run.receiver.received.filter((r) => r.path === "/special_order"),
      run.orders,
    ).sort((a, b) =>
      (a as { updated_on: string }).updated_on < (b as { updated_on: string }).updated_on ? -1 : 1,
    );
  const statusesOf = (run: Run, deviceId: string): string[] =>
    bodies(run)
      .filter((b) => b.hwi_device_id === deviceId)
      .map((b) => b.status);

  async function activate(run: Run, body: Record<string, unknown>): Promise<string> {
    const res = await run.lab.hwi("POST", "hwi-devices/", body);
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id;
  }

  /**
   * What a month of an account does: a request that ships, one without an address, one the lab
   * admin cancels, and hardware in hand whose gateway is replaced and then unlinked.
   */
  async function month(run: Run) {
    const { lab } = run;
    await lab.hwi("POST", "hwi-patients/", { external_id: "P-1", name: "Pat One", ...ADDRESS });
    await lab.hwi("POST", "hwi-patients/", { external_id: "P-3", name: "Pat Three", ...ADDRESS });
    const shipped = await activate(run, { device: { name: BPM }, patient: { external_id: "P-1" } });
    // No address at all: the client must act (spec 3).
    const blocked = await activate(run, {
      device: { name: "Vendor Scale" },
      patient: { external_id: "P-2" },
    });
    // A pending order the lab admin cancels: removed, the webhook is its only record.
    const cancelled = await activate(run, {
      device: { name: "Vendor Pulse Ox" },
      patient: { external_id: "P-1" },
    });
    await runFor(run, 0);
    const cancel = await lab.admin("POST", `orders/${cancelled}/advance/`, { status: "Cancelled" });
    expect(cancel.statusCode, cancel.body).toBe(200);
    // Another patient's hardware in hand on a known gateway (P-1's BPM would join a gateway of
    // its patient's): a replacement gateway ships, then the new gateway is unlinked.
    await lab.store.gateways.updateStatus(GW, {});
    const active = await activate(run, {
      device: { name: "Vendor Glucometer", hardware_uuid: GW },
      patient: { external_id: "P-3" },
    });
    const order = await lab.hwi("POST", "hwi-replacements/", {
      hwi_device_id: active,
      device_types: [{ name: "Gateway" }],
      shipping_name: "Pat Three",
      shipping_address: ADDRESS.address,
      shipping_city: ADDRESS.city,
      shipping_state: ADDRESS.state,
      shipping_zip_code: ADDRESS.zip_code,
    });
    expect(order.statusCode, order.body).toBe(201);
    await runFor(run, 60 * DAY);
    const gateway = (await lab.hwi("GET", `hwi-devices/${active}/`)).json().device.hardware_uuid;
    const unlinked = await lab.hwi("POST", `unlink-gateway/${gateway}/`);
    expect(unlinked.statusCode, unlinked.body).toBe(200);
    await runFor(run, 0);
    return { shipped, blocked, cancelled, active, newGateway: gateway as string };
  }

  it("the carrier's whole way to the door, the client's and the admin's statuses, Replaced and Unlinked", async () => {
    // Every order first waits for stock: On Hold, then the carrier's way to the door.
    const run = await open({ stock_shortage: 1, delivery_issue: 0, carrier_hold: 0 });
    const { shipped, blocked, cancelled, active, newGateway } = await month(run);

    const way = statusesOf(run, shipped);
    expect(way.slice(0, 4)).toEqual(["On Hold", "Ready to Ship", "Dropshipped", "In Transit"]);
    expect(way.slice(-2)).toEqual(["Out for Delivery", "Delivered"]);
    expect(way.slice(4, -2).every((s) => s === "In Transit")).toBe(true);
    expect(statusesOf(run, blocked)).toEqual(["Client Action Required"]);
    expect(statusesOf(run, cancelled)).toEqual(["On Hold", "Cancelled"]);
    const delivered = bodies(run).find(
      (b) => b.hwi_device_id === shipped && b.status === "Delivered",
    );
    expect(delivered).toMatchObject({ patient_id: "P-1", device_name: BPM, sensor_code: "10" });
    expect(delivered.tracking_link).toMatch(/^https:\/\/tracking\.rpmlab\.test\//);
    expect(delivered.hardware_uuid).toMatch(/^[0-9A-F]{12}$/);
    // Spec 6.2: Replaced and Unlinked carry the prior hardware uuid in device_id.
    expect(statusesOf(run, active)).toEqual(["Replaced", "Unlinked"]);
    const [replaced, unlinked] = bodies(run).filter((b) => b.hwi_device_id === active);
    expect(replaced).toMatchObject({ device_id: GW, hardware_uuid: newGateway, patient_id: "P-3" });
    expect(newGateway).not.toBe(GW);
    expect(unlinked).toMatchObject({ device_id: newGateway, hardware_uuid: null });
    // The replacement's own special-order webhooks follow the same way (spec 6.1, 6.2).
    const replacement = orderBodies(run);
    expect(replacement.map((o) => o.status).slice(0, 3)).toEqual([
      "On Hold",
      "Ready to Ship",
      "Dropshipped",
    ]);
    expect(replacement.at(-1)).toMatchObject({
      status: "Delivered",
      new_hardware_uuid: newGateway,
    });
    expect(replacement.at(-1).delivered_on).toBe(replacement.at(-1).updated_on);
    // One request per event: every delivery id came once (fulfilment webhooks are not retried).
    const ids = run.receiver.received
      .filter((r) => r.path === "/fulfillment")
      .map((r) => r.headers["x-rpmlab-delivery"]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("failed attempts: Delivery Issue, then Available for Pickup, never Delivered; with the other month, every status of spec 3", async () => {
    const run = await open({ stock_shortage: 0, delivery_issue: 1, carrier_hold: 0 });
    const { shipped } = await month(run);
    const way = statusesOf(run, shipped);
    expect(way.filter((s) => s === "Delivery Issue").length).toBeGreaterThan(0);
    expect(way.at(-1)).toBe("Available for Pickup");
    expect(way).not.toContain("Delivered");
    const replacement = orderBodies(run);
    expect(replacement.at(-1)).toMatchObject({
      status: "Available for Pickup",
      delivered_on: null,
    });
    expect(replacement.map((o) => o.status)).not.toContain("Delivered");
    // The device list's status=shipped leaves a package held for pickup out (spec 3).
    const listed = await run.lab.hwi("GET", "hwi-devices/?status=shipped");
    expect(listed.json().map((d: { id: string }) => d.id)).not.toContain(shipped);
    // Between the two months, every status of spec 3 reached the receiver.
    const first = await open({ stock_shortage: 1, delivery_issue: 0, carrier_hold: 0 });
    await month(first);
    const seen = new Set([...bodies(run), ...bodies(first)].map((b) => b.status));
    expect([...seen].sort()).toEqual([...FULFILMENT_STATUSES].sort());
  });
});
