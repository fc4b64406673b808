import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ADMIN, type Lab, makeLab } from "./helpers.ts";
import {
  ADDRESS,
  activate,
  BPM,
  type Envelope,
  GW,
  GW2,
  hwiCall,
  IMEI,
  knownGateway,
  labServices,
  ok,
} from "./hwi-fixtures.ts";

const SHIPPING = {
  shipping_name: "Pat One",
  shipping_address: "12 Main Street",
  shipping_city: "Irvine",
  shipping_state: "CA",
  shipping_zip_code: "92614",
  notify_emails: "a@example.com, b@example.com",
};

/** Spec 4.3 replacement orders (wire-formats "Replacements") and hwi-replacements listing. */
describe("hwi-replacements/", () => {
  let lab: Lab;
  let call: ReturnType<typeof hwiCall>;
  let device: { id: string };
  beforeEach(async () => {
    lab = await makeLab();
    call = hwiCall(lab);
    await knownGateway(lab);
    device = await activate(lab, { device: { name: BPM, hardware_uuid: GW } });
  });
  afterEach(() => lab.close());

  /** POST hwi-replacements/ for one device. */
  const replace = (id: string, device_types: { name: string }[]) =>
    call("POST", "hwi-replacements/", { hwi_device_id: id, device_types });
  /** The lab admin's advance of an order (a request's id is its device's). */
  const advance = (orderId: string, status: string, extra: Record<string, string> = {}) =>
    lab.app.inject({
      method: "POST",
      url: `/lab/v1/orders/${orderId}/advance/`,
      headers: ADMIN,
      payload: { status, ...extra },
    });
  const CELLULAR = "Vendor Cellular BPM";
  /** A direct-cellular device on IMEI, and its first replacement unit, ordered. */
  const cellularReplaced = async () => {
    const cellular = await activate(lab, { device: { name: CELLULAR, hardware_uuid: IMEI } });
    const first = await replace(cellular.id, [{ name: CELLULAR }]);
    expect(first.statusCode).toBe(201);
    return { cellular, r: first.json() as { id: string; status: string } };
  };

  it("POST creates a replacement (201) and keeps the device record as it is", async () => {
    const res = await call("POST", "hwi-replacements/", {
      hwi_device_id: device.id,
      device_types: [{ name: "Vendor BPM - L" }, { name: "Gateway" }],
      ...SHIPPING,
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({
      id: body.id,
      hwi_device_id: device.id,
      device_types: [{ name: BPM }, { name: "Gateway" }],
      ...SHIPPING,
      status: "Ready to Ship",
      previous_hardware_uuid: GW,
      new_hardware_uuid: null,
      created: "2024-10-16T04:10:01.000000Z",
      modified: "2024-10-16T04:10:01.000000Z",
      // Spec 6.2: special-order reads carry created_on, updated_on, shipped_on, delivered_on.
      created_on: "2024-10-16T04:10:01.000000Z",
      updated_on: "2024-10-16T04:10:01.000000Z",
      shipped_on: null,
      delivered_on: null,
      tracking_link: null,
    });
    expect(ok<{ status: string }>(await call("GET", `hwi-devices/${device.id}/`)).status).toBe(
      "Active",
    );
    expect(ok(await call("GET", `hwi-replacements/${body.id}/`))).toEqual(body);
    // Its shipping fields are taken as sent: not verified, so never held for the client.
    const scale = await activate(lab, { device: { name: "Vendor Scale", hardware_uuid: GW } });
    const unverified = await call("POST", "hwi-replacements/", {
      hwi_device_id: scale.id,
      device_types: [{ name: "Vendor Scale" }],
      ...SHIPPING,
      shipping_address: "1 Undeliverable Way",
      shipping_state: "XX",
      shipping_zip_code: "abc",
    });
    expect(unverified.statusCode).toBe(201);
    expect(unverified.json()).toMatchObject({ shipping_state: "XX", status: "Ready to Ship" });
    expect(
      (await call("GET", "hwi-replacements/00000000-0000-4000-8000-000000000000/")).json(),
    ).toEqual({
      detail: "No Replacement matches the given query.",
    });
  });

  it("when a replacement gateway ships, hardware_uuid moves and the log records it", async () => {
    const created = (
      await call("POST", "hwi-replacements/", {
        hwi_device_id: device.id,
        device_types: [{ name: "Gateway" }],
      })
    ).json();
    await labServices(lab).replacementShipping.ship(lab.dev.account.id, created.id, {
      hardwareUuid: GW2,
    });
    expect(ok(await call("GET", `hwi-devices/${device.id}/`))).toMatchObject({
      hardware_uuid: GW2,
      status: "Replaced",
    });
    expect(ok(await call("GET", `hwi-replacements/${created.id}/`))).toMatchObject({
      status: "Dropshipped",
      new_hardware_uuid: GW2,
    });
    const logs = ok<{ reason: string; previous_hardware_uuid: string | null }[]>(
      await call("GET", `hwi-hardware-uuid-logs/?hwi_device_id=${device.id}`),
    );
    expect(logs.map((l) => [l.reason, l.previous_hardware_uuid])).toEqual([
      ["activation", null],
      ["replacement", GW],
    ]);
    expect(logs[1]).toMatchObject({ hwi_device_id: device.id, hardware_uuid: GW2 });
    expect(Object.keys(logs[1]!)).toEqual([
      "id",
      "hwi_device_id",
      "previous_hardware_uuid",
      "hardware_uuid",
      "reason",
      "created",
    ]);
  });

  it("unlink-gateway/ of a replaced gateway id says the devices moved to the replacement, not that they were unlinked", async () => {
    // A client that trusted "already unlinked" would tell the clinic the patient's hardware was
    // unlinked (spec 4.2: check for a 2xx before confirming) while it goes on billing.
    const created = (await replace(device.id, [{ name: "Gateway" }])).json() as { id: string };
    await labServices(lab).replacementShipping.ship(lab.dev.account.id, created.id, {
      hardwareUuid: GW2,
    });
    expect(ok(await call("POST", `unlink-gateway/${GW}/`))).toEqual({
      detail: `Nothing to unlink on gateway ${GW}: it was replaced by ${GW2}, which its devices moved to (spec 4.3); unlink ${GW2} to unlink them.`,
      unlinked_by: "gateway_id",
      id: GW,
      devices: [],
    });
    expect(ok(await call("GET", `hwi-devices/${device.id}/`))).toMatchObject({
      hardware_uuid: GW2,
    });
  });

  it("refuses a replacement while the device's package is on its way, keyed by hwi_device_id; takes it once held for pickup, or for hardware in hand", async () => {
    await call("POST", "hwi-patients/", { external_id: "P-1", name: "Pat One", ...ADDRESS });
    const ordered = await activate(lab, { device: { name: BPM }, patient: { external_id: "P-1" } });
    for (const status of ["Dropshipped", "In Transit", "Out for Delivery", "Delivery Issue"]) {
      expect((await advance(ordered.id, status)).json().status).toBe(status);
      for (const types of [[{ name: "Gateway" }], [{ name: BPM }]]) {
        const refused = await replace(ordered.id, types);
        expect(refused.statusCode).toBe(400);
        expect(refused.json()).toEqual({
          hwi_device_id: [
            `Device ${ordered.id} has not reached the patient yet (${status}): there is nothing to replace; wait for its delivery.`,
          ],
        });
      }
    }
    expect(ok(await call("GET", "hwi-replacements/"))).toEqual([]);
    // Attempts exhausted: the carrier holds it, and the patient may never collect it.
    const held = await advance(ordered.id, "Available for Pickup");
    expect(held.json().status).toBe("Available for Pickup");
    expect((await replace(ordered.id, [{ name: "Gateway" }])).statusCode).toBe(201);
    // Hardware in hand is replaced as ever.
    expect((await replace(device.id, [{ name: "Gateway" }])).statusCode).toBe(201);
  });

  it("ship_gateway_only: the device the patient has is replaced while its gateway is on order; the gateway only once delivered, else 400 keyed device_types", async () => {
    await call("POST", "hwi-patients/", { external_id: "P-1", name: "Pat One", ...ADDRESS });
    const ordered = await activate(lab, {
      device: { name: BPM },
      patient: { external_id: "P-1" },
      ship_gateway_only: true,
    });
    const statuses = ["Dropshipped", "In Transit", "Out for Delivery", "Delivery Issue"];
    for (const status of ["Ready to Ship", ...statuses]) {
      if (status !== "Ready to Ship") {
        expect((await advance(ordered.id, status)).json().status).toBe(status);
      }
      // The device, delivered each time so that a second is no duplicate order.
      const own = await replace(ordered.id, [{ name: BPM }]);
      expect(own.statusCode, own.body).toBe(201);
      expect((await advance(own.json().id, "Delivered")).statusCode).toBe(200);
      const gateway = await replace(ordered.id, [{ name: BPM }, { name: "Gateway" }]);
      expect(gateway.statusCode).toBe(400);
      expect(gateway.json()).toEqual({
        device_types: [
          `Item 2: the gateway of device ${ordered.id} has not reached the patient yet (${status}): there is no gateway to replace; wait for its delivery.`,
        ],
      });
    }
    expect(ok<unknown[]>(await call("GET", "hwi-replacements/"))).toHaveLength(5);
    expect((await advance(ordered.id, "Delivered")).json().status).toBe("Delivered");
    expect((await replace(ordered.id, [{ name: "Gateway" }])).statusCode).toBe(201);
  });

  it("refuses another gateway replacement while the first one's gateway is on its way, keyed by device_types; takes the device itself, and the gateway once delivered", async () => {
    const scale = await activate(lab, { device: { name: "Vendor Scale", hardware_uuid: GW } });
    const first = await replace(device.id, [{ name: "Gateway" }]);
    expect(first.statusCode).toBe(201);
    const r = first.json() as { id: string };
    expect((await advance(r.id, "Dropshipped", { hardware_uuid: GW2 })).statusCode).toBe(200);
    for (const status of ["Dropshipped", "In Transit", "Out for Delivery", "Delivery Issue"]) {
      if (status !== "Dropshipped") {
        expect((await advance(r.id, status)).json().status).toBe(status);
      }
      // Both devices moved to the gateway in the mail: neither can have it replaced yet.
      for (const d of [device, scale]) {
        const refused = await replace(d.id, [{ name: "Gateway" }]);
        expect(refused.statusCode).toBe(400);
        expect(refused.json()).toEqual({
          device_types: [
            `Item 1: the replacement gateway ${GW2} of device ${d.id} (replacement ${r.id}) has not reached the patient yet (${status}): there is nothing to replace; wait for its delivery.`,
          ],
        });
      }
    }
    // The device itself is with the patient.
    expect((await replace(device.id, [{ name: BPM }])).statusCode).toBe(201);
    expect((await advance(r.id, "Delivered")).json().status).toBe("Delivered");
    expect((await replace(scale.id, [{ name: "Gateway" }])).statusCode).toBe(201);
  });

  it("refuses a second gateway replacement while the first is on order (not shipped), for every device on that gateway, keyed by device_types; takes the device itself, and the gateway once the first is delivered", async () => {
    const scale = await activate(lab, { device: { name: "Vendor Scale", hardware_uuid: GW } });
    const first = await replace(device.id, [{ name: "Gateway" }]);
    expect(first.statusCode).toBe(201);
    const r = first.json() as { id: string; status: string };
    for (const d of [device, scale]) {
      const refused = await replace(d.id, [{ name: "Gateway" }]);
      expect(refused.statusCode).toBe(400);
      const of = d.id === device.id ? "" : ` (ordered for device ${device.id})`;
      expect(refused.json()).toEqual({
        device_types: [
          `Item 1: the gateway ${GW} of device ${d.id} is already being replaced: replacement ${r.id}${of} has not shipped yet (${r.status}); a second one is a duplicate order.`,
        ],
      });
    }
    // Only one box ships: the devices end on its gateway.
    const list = ok<{ device_types: { name: string }[] }[]>(await call("GET", "hwi-replacements/"));
    expect(list.filter((x) => x.device_types.some((t) => t.name === "Gateway"))).toHaveLength(1);
    expect((await replace(scale.id, [{ name: "Vendor Scale" }])).statusCode).toBe(201);
    expect((await advance(r.id, "Delivered", { hardware_uuid: GW2 })).statusCode).toBe(200);
    expect((await replace(scale.id, [{ name: "Gateway" }])).statusCode).toBe(201);
  });

  it("refuses a second replacement of the device itself while the first's device is on order or in the mail, keyed by device_types; takes it once delivered", async () => {
    const first = await replace(device.id, [{ name: BPM }]);
    expect(first.statusCode).toBe(201);
    const r = first.json() as { id: string };
    const refusedWhile = async (status: string, because: string) => {
      const refused = await replace(device.id, [{ name: "Gateway" }, { name: BPM }]);
      expect(refused.statusCode).toBe(400);
      expect(refused.json()).toEqual({
        device_types: [
          `Item 2: device ${device.id} (${BPM}) is already being replaced: replacement ${r.id} ${because} (${status}); a second one is a duplicate order.`,
        ],
      });
    };
    await refusedWhile("Ready to Ship", "has not shipped yet");
    for (const status of ["Dropshipped", "In Transit", "Out for Delivery", "Delivery Issue"]) {
      expect((await advance(r.id, status)).json().status).toBe(status);
      await refusedWhile(status, "has not reached the patient yet");
    }
    // Only the one box ships; its gateway is still with the patient and can be replaced.
    expect((await replace(device.id, [{ name: "Gateway" }])).statusCode).toBe(201);
    expect((await advance(r.id, "Delivered")).json().status).toBe("Delivered");
    expect((await replace(device.id, [{ name: BPM }])).statusCode).toBe(201);
  });

  it("refuses a second replacement unit of a direct-cellular device while the first is on order (not shipped)", async () => {
    const { cellular, r } = await cellularReplaced();
    const refused = await replace(cellular.id, [{ name: CELLULAR }]);
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({
      device_types: [
        `Item 1: the IMEI ${IMEI} of device ${cellular.id} is already being replaced: replacement ${r.id} has not shipped yet (${r.status}); a second one is a duplicate order.`,
      ],
    });
  });

  it("refuses another replacement of a direct-cellular device while the first one's unit (its new IMEI) is on its way", async () => {
    const { cellular, r } = await cellularReplaced();
    const NEW_IMEI = "356938035643817";
    expect((await advance(r.id, "In Transit", { hardware_uuid: NEW_IMEI })).statusCode).toBe(200);
    const refused = await replace(cellular.id, [{ name: CELLULAR }]);
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({
      device_types: [
        `Item 1: the replacement IMEI ${NEW_IMEI} of device ${cellular.id} (replacement ${r.id}) has not reached the patient yet (In Transit): there is nothing to replace; wait for its delivery.`,
      ],
    });
    expect((await advance(r.id, "Delivered")).json().status).toBe("Delivered");
    expect((await replace(cellular.id, [{ name: CELLULAR }])).statusCode).toBe(201);
  });

  it("400 keyed by field: device, device types, shipping all-or-none", async () => {
    const res = await call("POST", "hwi-replacements/", {
      hwi_device_id: "00000000-0000-4000-8000-000000000000",
      device_types: [],
    });
    expect(res.statusCode).toBe(400);
    expect(Object.keys(res.json()).sort()).toEqual(["device_types", "hwi_device_id"]);
    const partial = await call("POST", "hwi-replacements/", {
      hwi_device_id: device.id,
      device_types: [{ name: "Vendor Scale" }],
      shipping_name: "Pat",
    });
    expect(Object.keys(partial.json()).sort()).toEqual([
      "device_types",
      "shipping_address",
      "shipping_city",
      "shipping_state",
      "shipping_zip_code",
    ]);
    expect((await call("POST", "hwi-replacements/", {})).json()).toMatchObject({
      hwi_device_id: ["This field is required."],
      device_types: ["This field is required."],
    });
  });

  it("400 names what is wrong with each device_types item: not an object, or its name", async () => {
    const problems = async (device_types: unknown[]) => {
      const res = await call("POST", "hwi-replacements/", {
        hwi_device_id: device.id,
        device_types,
      });
      expect(res.statusCode, res.body).toBe(400);
      return res.json().device_types;
    };
    // A bare name and a name of the wrong type were both "Item 1: {"name": …} is required."
    expect(await problems(["Gateway", null])).toEqual([
      "Item 1: Invalid data. Expected a dictionary, but got str.",
      "Item 2: Invalid data. Expected a dictionary, but got NoneType.",
    ]);
    expect(
      await problems([
        {},
        { name: null },
        { name: " " },
        { name: ["Gateway"] },
        { name: "a\u0000" },
      ]),
    ).toEqual([
      "Item 1: name: This field is required.",
      "Item 2: name: This field may not be null.",
      "Item 3: name: This field may not be blank.",
      "Item 4: name: Not a valid string.",
      "Item 5: name: Null characters are not allowed.",
    ]);
    // A number is its text (DRF CharField), then checked as a type name.
    expect(await problems([{ name: "Gateway" }, { name: 7 }])).toEqual([
      `Item 2: "7" is not a valid device type: use "Gateway" or the device's type (${BPM}).`,
    ]);
    expect(await lab.store.replacements.list(lab.dev.account.id)).toMatchObject({ rows: [] });
  });

  it("GET: flat without page, envelope with page; flat truncated at 1000 (spec 8)", async () => {
    const a = lab.dev.account.id;
    for (let i = 0; i < 1001; i++) {
      await lab.store.replacements.create(a, { deviceId: device.id, deviceTypes: ["Gateway"] });
    }
    const flat = ok<unknown[]>(await call("GET", "hwi-replacements/"));
    expect(flat).toHaveLength(1000);
    const page = ok<Envelope>(await call("GET", "hwi-replacements/?page=2&page_size=1000"));
    expect(page).toMatchObject({ count: 1001, next: null });
    expect(page.results).toHaveLength(1);
    expect(page.previous).toMatch(/page=1/);
  }, 30_000);
});

/** Spec 4.3 hwi-hardware-uuid-logs (record fields: rpmlab's, spec 2.7 "not shown"). */
describe("hwi-hardware-uuid-logs/", () => {
  let lab: Lab;
  beforeEach(async () => {
    lab = await makeLab();
  });
  afterEach(() => lab.close());

  it("flat without page (truncated at 1000), envelope with page, account-scoped", async () => {
    const a = lab.dev.account.id;
    for (let i = 0; i < 1001; i++) {
      const uuid = i.toString(16).toUpperCase().padStart(12, "0");
      await lab.store.devices.create(a, {
        name: "Vendor Scale",
        hardwareUuid: uuid,
        status: "Active",
      });
    }
    const call = hwiCall(lab);
    const flat = ok<{ reason: string; created: string }[]>(
      await call("GET", "hwi-hardware-uuid-logs/"),
    );
    expect(flat).toHaveLength(1000);
    expect(flat[0]).toMatchObject({ reason: "activation", created: "2024-10-16T04:10:00.000000Z" });
    const page = ok<Envelope>(await call("GET", "hwi-hardware-uuid-logs/?page=1&page_size=10"));
    expect(page.count).toBe(1001);
    expect(page.results).toHaveLength(10);
    expect(ok<unknown[]>(await hwiCall(lab, lab.other)("GET", "hwi-hardware-uuid-logs/"))).toEqual(
      [],
    );
  }, 30_000);

  it("refuses an hwi_device_id that is no UUID, keyed by it (it answered an empty list)", async () => {
    const answer = await hwiCall(lab)("GET", "hwi-hardware-uuid-logs/?hwi_device_id=not-a-uuid");
    expect(answer.statusCode).toBe(400);
    expect(answer.json()).toEqual({ hwi_device_id: ["Enter a valid UUID."] });
  });
});
