import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ADMIN, apiKey, type Lab, makeLab } from "./helpers.ts";
import { ADDRESS, activate, BPM, GW2, hwiCall, ok, QUIET } from "./hwi-fixtures.ts";

/** Issue 4 §2 "Admin": /lab/v1/orders/ and /lab/v1/billing/ with the admin token. */
describe("lab admin API: orders and billing", () => {
  let lab: Lab;
  let call: ReturnType<typeof hwiCall>;
  beforeEach(async () => {
    lab = await makeLab({ config: { fulfilment: QUIET } });
    call = hwiCall(lab);
  });
  afterEach(() => lab.close());

  const admin = (method: "GET" | "POST", path: string, body?: unknown) =>
    lab.app.inject({
      method,
      url: `/lab/v1/${path}`,
      headers: ADMIN,
      ...(body === undefined ? {} : { payload: body as object }),
    });

  /** A fulfilment request through the HWI API, as a client makes one. */
  async function order(externalId = "P-1", over: Record<string, unknown> = {}) {
    await call("POST", "hwi-patients/", { external_id: externalId, name: "Pat One", ...ADDRESS });
    return activate(lab, { device: { name: BPM }, patient: { external_id: externalId }, ...over });
  }

  it("takes the admin token only", async () => {
    expect((await lab.app.inject({ method: "GET", url: "/lab/v1/orders/" })).statusCode).toBe(401);
    const withKey = await lab.app.inject({
      method: "GET",
      url: "/lab/v1/billing/",
      headers: apiKey(lab.dev.key),
    });
    expect(withKey.statusCode).toBe(403);
    const advance = await lab.app.inject({
      method: "POST",
      url: "/lab/v1/orders/x/advance/",
      headers: apiKey(lab.dev.key),
      payload: { status: "Delivered" },
    });
    expect(advance.statusCode).toBe(403);
  });

  it("lists orders, advances one to Delivered, and the HWI reads follow", async () => {
    const device = await order();
    expect(device.status).toBe("Ready to Ship");
    const listed = ok<{ id: string; status: string; created_on: string }[]>(
      await admin("GET", "orders/?status=pending&account=acme-dev"),
    );
    expect(listed).toMatchObject([
      { id: device.id, status: "Ready to Ship", created_on: "2024-10-16T04:10:00.000000Z" },
    ]);
    expect(ok(await admin("GET", "orders/?status=shipped"))).toEqual([]);
    // Status names and kinds in any case, as shipped and pending are.
    expect(ok(await admin("GET", "orders/?status=ready%20to%20ship&kind=Device"))).toMatchObject([
      { id: device.id },
    ]);
    expect(ok(await admin("GET", "orders/?status=IN%20TRANSIT"))).toEqual([]);
    const page = ok<{ count: number; results: unknown[] }>(await admin("GET", "orders/?page=1"));
    expect(page).toMatchObject({ count: 1, next: null, previous: null });

    lab.advance(3_600_000);
    const res = await admin("POST", `orders/${device.id}/advance/`, {
      status: "Delivered",
      hardware_uuid: GW2,
    });
    expect(res.statusCode, res.body).toBe(200);
    const delivered = res.json();
    expect(delivered).toMatchObject({
      id: device.id,
      kind: "device",
      client_domain: "acme-dev",
      status: "Delivered",
      hardware_uuid: GW2,
      ships_device: true,
      ships_gateway: true,
      shipped_on: "2024-10-16T05:10:01.000000Z",
      delivered_on: "2024-10-16T05:10:01.000000Z",
      delivered_via: "doorstep",
      next_status: null,
      next_at: null,
      removed: false,
    });
    expect(delivered.tracking_link).toMatch(/^https:\/\/tracking\.rpmlab\.test\//);
    expect(delivered.history.map((h: { status: string }) => h.status)).toEqual([
      "Ready to Ship",
      "Dropshipped",
      "In Transit",
      "Out for Delivery",
      "Delivered",
    ]);
    expect(ok(await admin("GET", `orders/${device.id}/`))).toEqual(delivered);
    expect(ok(await call("GET", `hwi-devices/${device.id}/`))).toMatchObject({
      status: "Delivered",
      hardware_uuid: GW2,
    });
    const gateways = ok<{ results: { gateway_uuid: string; shipped_on: string }[] }>(
      await call("GET", "hwi-gateways/?shipped_on__isnull=false"),
    );
    expect(gateways.results).toMatchObject([
      { gateway_uuid: GW2, shipped_on: "2024-10-16T05:10:01.000000Z" },
    ]);
    const webhooks = lab.recorded
      .filter((r) => r.name === "fulfilment.status")
      .map((r) => (r.payload as { status: string }).status);
    expect(webhooks).toEqual([
      "Ready to Ship",
      "Dropshipped",
      "In Transit",
      "Out for Delivery",
      "Delivered",
    ]);
  });

  it("answers 400 keyed by field, 404 for an unknown order", async () => {
    const device = await order();
    const bad = await admin("POST", `orders/${device.id}/advance/`, { status: "Replaced" });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({
      status: [expect.stringContaining("Replaced is not a carrier status")],
    });
    const event = await admin("POST", `orders/${device.id}/events/`, { event: "delivered" });
    expect(event.statusCode).toBe(400);
    expect(event.json()).toEqual({
      event: [
        "A delivered event cannot happen to an order in Ready to Ship. No carrier event can.",
      ],
    });
    const list = await admin("POST", `orders/${device.id}/advance/`, ["Delivered"]);
    expect(list.json()).toEqual({
      non_field_errors: ["Invalid data. Expected a dictionary, but got list."],
    });
    const missing = await admin("POST", "orders/00000000-0000-4000-8000-000000000000/advance/", {
      status: "Delivered",
    });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({
      detail: 'No order has id "00000000-0000-4000-8000-000000000000".',
    });
    expect((await admin("GET", "orders/?status=lost")).json()).toEqual({
      status: [expect.stringContaining('"lost" is not a valid choice.')],
    });
  });

  it("injects carrier events and cancels a pending order (removed: the webhook is the only record)", async () => {
    const shipped = await order();
    const pending = await order("P-2");
    await admin("POST", `orders/${shipped.id}/advance/`, { status: "Dropshipped" });
    const scan = await admin("POST", `orders/${shipped.id}/events/`, {
      event: "scan",
      location: "Memphis, TN",
    });
    expect(scan.statusCode).toBe(200);
    expect(scan.json().history.at(-1)).toMatchObject({
      status: "In Transit",
      location: "Memphis, TN",
    });
    // By the status its webhook shows, as an admin copies it (spec 3), in any case.
    const again = await admin("POST", `orders/${shipped.id}/events/`, { event: "IN_TRANSIT" });
    expect(again.statusCode).toBe(200);
    expect(again.json().history.at(-1)).toMatchObject({ status: "In Transit" });
    const held = await admin("POST", `orders/${shipped.id}/events/`, {
      event: "Available for Pickup",
    });
    expect(held.json().status).toBe("Available for Pickup");
    const list = ok<{ status: string }[]>(await call("GET", "hwi-devices/?status=shipped"));
    expect(list).toEqual([]);
    const cancelled = await admin("POST", `orders/${pending.id}/advance/`, { status: "Cancelled" });
    expect(cancelled.json()).toMatchObject({ status: "Cancelled", removed: true });
    expect((await call("GET", `hwi-devices/${pending.id}/`)).statusCode).toBe(404);
    expect((await admin("GET", `orders/${pending.id}/`)).statusCode).toBe(404);
  });

  it("lists an order an unlink stopped as Unlinked, in the list, its filters and every read (spec 3)", async () => {
    const moving = await order();
    await admin("POST", `orders/${moving.id}/advance/`, { status: "In Transit" });
    const delivered = await order("P-2");
    await admin("POST", `orders/${delivered.id}/advance/`, {
      status: "Delivered",
      hardware_uuid: GW2,
    });
    const replacement = await call("POST", "hwi-replacements/", {
      hwi_device_id: delivered.id,
      device_types: [{ name: "Gateway" }],
    });
    expect(replacement.statusCode, replacement.body).toBe(201);
    const r = replacement.json() as { id: string };
    expect((await call("POST", `unlink-gateway/${moving.id}/`)).statusCode).toBe(200);
    expect((await call("GET", `unlink-gateway/${GW2}/`)).statusCode).toBe(200);

    const ids = async (query: string) =>
      ok<{ id: string }[]>(await admin("GET", `orders/${query}`)).map((o) => o.id);
    const listed = ok<{ id: string; status: string; halted: string | null }[]>(
      await admin("GET", "orders/"),
    );
    expect(listed.map((o) => [o.id, o.status, o.halted])).toEqual([
      [moving.id, "Unlinked", "unlinked"],
      [delivered.id, "Delivered", null],
      [r.id, "Unlinked", "unlinked"],
    ]);
    expect(await ids("?status=In%20Transit")).toEqual([]);
    expect(await ids("?status=shipped")).toEqual([]);
    expect(await ids("?status=pending")).toEqual([]);
    expect(await ids("?status=Unlinked")).toEqual([moving.id, r.id]);
    const shown = ok<{ status: string; history: { status: string; detail: string }[] }>(
      await admin("GET", `orders/${moving.id}/`),
    );
    expect(shown.status).toBe("Unlinked");
    expect(shown.history.at(-1)).toMatchObject({
      status: "Unlinked",
      detail: "Stopped in In Transit: the device was unlinked",
    });
    expect(ok<{ status: string }>(await call("GET", `hwi-shipments/${moving.id}/`)).status).toBe(
      "Unlinked",
    );
    expect(ok<{ status: string }>(await call("GET", `hwi-devices/${moving.id}/`)).status).toBe(
      "Unlinked",
    );
    expect(ok<{ status: string }>(await call("GET", `hwi-replacements/${r.id}/`)).status).toBe(
      "Unlinked",
    );
    const refused = await admin("POST", `orders/${moving.id}/advance/`, { status: "Delivered" });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({
      status: [
        `Order ${moving.id} no longer moves: its device was unlinked (the order is Unlinked).`,
      ],
    });
  });

  it("releases a request held for its address when PATCH hwi-patients confirms it (spec 3)", async () => {
    await call("POST", "hwi-patients/", {
      external_id: "P-1",
      name: "Pat",
      ...ADDRESS,
      address: "PO Box 12",
    });
    const device = await activate(lab, { device: { name: BPM }, patient: { external_id: "P-1" } });
    expect(device.status).toBe("Client Action Required");
    const patched = await call("PATCH", "hwi-patients/P-1/", { confirm_address: true });
    expect(patched.statusCode).toBe(200);
    expect(ok<{ status: string }>(await call("GET", `hwi-devices/${device.id}/`)).status).toBe(
      "Ready to Ship",
    );
    const statuses = lab.recorded
      .filter((r) => r.name === "fulfilment.status")
      .map((r) => (r.payload as { status: string }).status);
    expect(statuses).toEqual(["Client Action Required", "Ready to Ship"]);
  });

  it("reports device-days per account and the hardware shipped", async () => {
    const device = await order();
    await admin("POST", `orders/${device.id}/advance/`, { status: "Delivered" });
    lab.advance(2 * 86_400_000);
    const res = await admin("GET", "billing/?month=2024-10&account=acme-dev");
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      from: "2024-10-01T00:00:00.000000Z",
      to: "2024-11-01T00:00:00.000000Z",
      as_of: "2024-10-18T04:10:01.000000Z",
      device_days: 3,
      accounts: [
        {
          account_id: lab.dev.account.id,
          client_domain: "acme-dev",
          device_days: 3,
          devices: [
            {
              hwi_device_id: device.id,
              device_name: BPM,
              basis: "delivery",
              billable_from: "2024-10-16T04:10:01.000000Z",
              billable_until: null,
              device_days: 3,
            },
          ],
          hardware_shipped: { devices: 1, gateways: 1 },
          supplies: [],
          supply_charges: "0.00",
        },
      ],
    });
    const all = ok<{ accounts: { client_domain: string }[] }>(await admin("GET", "billing/"));
    expect(all.accounts.map((a) => a.client_domain)).toEqual(["acme", "acme-dev", "other-dev"]);
    const bad = await admin("GET", "billing/?from=2024-10-05&to=2024-10-01");
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({
      to: ["The last day (2024-10-01) comes before the first (from: 2024-10-05)."],
    });
  });
});
