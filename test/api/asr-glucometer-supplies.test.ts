import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AutoReorder } from "../../src/asr/auto-reorder.ts";
import { asrDeps } from "./asr-fixtures.ts";
import { ADMIN, hwi, type Lab, makeLab, send } from "./helpers.ts";
import {
  activate,
  DAY,
  GW,
  GW2,
  IMEI,
  knownGateway,
  labServices,
  ok,
  reading,
} from "./hwi-fixtures.ts";

/** Spec 2.7 glucometer supply record, 4.5 glucometer_supplies/ and automatic reorder (1.4). */

const PATIENT = {
  external_id: "P-1",
  name: "Ada Patient",
  address: "1 Main St",
  city: "Irvine",
  state: "CA",
  zip_code: "92614",
  email: "ada@example.com",
};
const SHIP_TO = {
  shipping_name: PATIENT.name,
  shipping_address: PATIENT.address,
  shipping_city: PATIENT.city,
  shipping_state: PATIENT.state,
  shipping_zip_code: PATIENT.zip_code,
};

describe("asr/glucometer_supplies/ and automatic reorder", () => {
  let lab: Lab;
  let glucometer: { id: string };
  let readings = 0;
  const asr = (method: "GET" | "PUT", path: string, body?: unknown) =>
    send(lab.app, method, `/clients/acme/asr/${path}`, lab.prod.key, body);
  const record = async (hardware = GW) =>
    ok<Record<string, number>>(await asr("GET", `glucometer_supplies/${hardware}/`));
  /** `n` glucose readings of the glucometer, `perDay` a day back from now. */
  const test = async (n: number, perDay: number, deviceId = glucometer.id, hardwareUuid = GW) => {
    const now = lab.clock.now();
    const rows = Array.from({ length: n }, (_, i) =>
      reading(lab.prod, deviceId, {
        deviceName: "Vendor Glucometer",
        hardwareUuid,
        metric: "glucose",
        value1: 110,
        timestamp: now - Math.floor((i * DAY) / perDay) - 60_000,
        measurementIndex: ++readings,
        filterParams: { measurement_index: readings },
      }),
    );
    await lab.store.measurements.insertMany(rows);
  };
  /** A strip order for GW placed through the API, then marked shipped. */
  const shipStrips = async (supply_name: string) => {
    const order = await send(lab.app, "POST", "/clients/acme/asr/supply-requests/", lab.prod.key, {
      supply_name,
      gateway_id: GW,
      shipping_name: PATIENT.name,
      shipping_address: PATIENT.address,
      shipping_city: PATIENT.city,
      shipping_state: PATIENT.state,
      shipping_zip_code: PATIENT.zip_code,
    });
    expect(order.statusCode, order.body).toBe(201);
    await lab.store.supplyRequests.update(order.json().id, {
      status: "fulfilled",
      shippedOn: lab.clock.now(),
    });
  };
  const autoReorder = (body: unknown) =>
    lab.app.inject({
      method: "PUT",
      url: "/lab/v1/accounts/acme/auto-reorder/",
      headers: ADMIN,
      payload: body as Record<string, unknown>,
    });

  beforeEach(async () => {
    lab = await makeLab();
    readings = 0;
    await knownGateway(lab, GW);
    await knownGateway(lab, GW2);
    const patient = await send(lab.app, "POST", hwi(lab.prod, "hwi-patients/"), lab.prod.key, {
      ...PATIENT,
      confirm_address: true,
    });
    expect(patient.statusCode, patient.body).toBe(201);
    glucometer = await activate(
      lab,
      { device: { name: "Vendor Glucometer", hardware_uuid: GW }, patient: { external_id: "P-1" } },
      lab.prod,
    );
    await activate(
      lab,
      { device: { name: "Vendor Scale", hardware_uuid: GW2 }, patient: PATIENT },
      lab.prod,
    );
  });
  afterEach(() => lab.close());

  it("counts the meter's strips down with each glucose reading; daily use from the last two weeks", async () => {
    expect(await record()).toEqual({
      strips_sent: 50,
      estimated_strips_remaining: 50,
      average_measurements_per_day: 0,
    });
    await test(20, 4);
    expect(await record(GW.toLowerCase())).toEqual({
      strips_sent: 50,
      estimated_strips_remaining: 30,
      average_measurements_per_day: 4,
    });
    await test(40, 4);
    expect(await record()).toMatchObject({ estimated_strips_remaining: 0 });
  });

  it("a new meter's daily use is the readings taken in its short history, not spread over whole days", async () => {
    // Read 4 times a day, every 6 hours, from its first reading on.
    await test(1, 1);
    const shown: number[] = [];
    for (let hour = 1; hour <= 66; hour++) {
      lab.advance(DAY / 24);
      if (hour % 6 === 0) await test(1, 1);
      if ([25, 30, 42, 49, 54, 66].includes(hour)) {
        shown.push((await record()).average_measurements_per_day!);
      }
    }
    expect(shown).toEqual([4, 4, 4, 4, 4, 4]);
  });

  it("PUT sets the estimate; later readings count down from it", async () => {
    await test(10, 2);
    const put = await asr("PUT", `glucometer_supplies/${GW}/`, { estimated_strips_remaining: 100 });
    expect(ok(put)).toMatchObject({ strips_sent: 50, estimated_strips_remaining: 100 });
    await test(5, 2);
    expect(await record()).toMatchObject({ estimated_strips_remaining: 95 });
    for (const [body, message] of [
      [{ estimated_strips_remaining: -1 }, /greater than or equal to 0/],
      [{ estimated_strips_remaining: "many" }, /valid integer/],
      [{}, /required/],
    ] as const) {
      const res = await asr("PUT", `glucometer_supplies/${GW}/`, body);
      expect(res.statusCode).toBe(400);
      expect(res.json().estimated_strips_remaining[0]).toMatch(message);
    }
    expect(await record()).toMatchObject({ estimated_strips_remaining: 95 });
    // DRF's IntegerField takes a whole number written with a zero fraction, "90.0" as 90 (a
    // form or a spreadsheet export writes it so); "90.5" is no integer.
    const written = await asr("PUT", `glucometer_supplies/${GW}/`, {
      estimated_strips_remaining: "90.0",
    });
    expect(ok(written)).toMatchObject({ estimated_strips_remaining: 90 });
    const fraction = await asr("PUT", `glucometer_supplies/${GW}/`, {
      estimated_strips_remaining: "90.5",
    });
    expect(fraction.json()).toEqual({
      estimated_strips_remaining: ["A valid integer is required."],
    });
  });

  it("404 for hardware without a glucometer of the account, whatever the body", async () => {
    const malformed = await lab.app.inject({
      method: "PUT",
      url: `/clients/acme/asr/glucometer_supplies/${GW2}/`,
      headers: { authorization: `Api-Key ${lab.prod.key}`, "content-type": "application/json" },
      payload: "{not json",
    });
    expect(malformed.statusCode).toBe(404);
    for (const hardware of [GW2, "AAAAAAAAAAAA", IMEI]) {
      expect((await asr("GET", `glucometer_supplies/${hardware}/`)).statusCode).toBe(404);
      const put = await asr("PUT", `glucometer_supplies/${hardware}/`, {
        estimated_strips_remaining: 3,
      });
      expect(put.statusCode).toBe(404);
    }
  });

  it("follows the meter to a replacement gateway: its strips, orders and offset go with it", async () => {
    await shipStrips("Glucometer Test Strips (50)");
    await test(10, 4);
    ok(await asr("PUT", `glucometer_supplies/${GW}/`, { estimated_strips_remaining: 70 }));
    await test(4, 4);
    const before = await record();
    // 14 readings since the first, 2¼ days ago: 13 after it, 5.78 a day.
    expect(before).toEqual({
      strips_sent: 100,
      estimated_strips_remaining: 66,
      average_measurements_per_day: 6,
    });
    const replacement = "0123456789AB";
    await lab.store.devices.replaceHardware(lab.prod.account.id, GW, replacement);
    expect(await record(replacement)).toEqual(before);
    expect((await asr("GET", `glucometer_supplies/${GW}/`)).statusCode).toBe(404);
    await test(1, 4, glucometer.id, replacement);
    expect(await record(replacement)).toMatchObject({ estimated_strips_remaining: 65 });
  });

  it("a new meter on a gateway starts from its own box: strips shipped for the last one stay theirs", async () => {
    await shipStrips("Glucometer Test Strips (100)");
    expect(await record()).toMatchObject({ strips_sent: 150 });
    await lab.store.devices.unlinkDevice(lab.prod.account.id, glucometer.id);
    await activate(
      lab,
      { device: { name: "Vendor Glucometer", hardware_uuid: GW }, patient: { external_id: "P-3" } },
      lab.prod,
    );
    expect(await record()).toEqual({
      strips_sent: 50,
      estimated_strips_remaining: 50,
      average_measurements_per_day: 0,
    });
  });

  it("a replacement meter comes in its own box: its strips count once it ships, a gateway alone brings none", async () => {
    const services = labServices(lab);
    const account = lab.prod.account.id;
    await test(20, 4);
    expect(await record()).toMatchObject({ strips_sent: 50, estimated_strips_remaining: 30 });
    const gateway = await services.replacements.create(account, {
      hwi_device_id: glucometer.id,
      device_types: [{ name: "Gateway" }],
      ...SHIP_TO,
    });
    await services.orders.advance(gateway.id, { status: "Delivered" });
    const moved = (await lab.store.devices.get(account, glucometer.id))!.hardwareUuid!;
    expect(await record(moved)).toMatchObject({ strips_sent: 50, estimated_strips_remaining: 30 });
    const meter = await services.replacements.create(account, {
      hwi_device_id: glucometer.id,
      device_types: [{ name: "Vendor Glucometer" }],
      ...SHIP_TO,
    });
    expect(await record(moved)).toMatchObject({ strips_sent: 50 });
    await services.orders.advance(meter.id, { status: "Dropshipped" });
    expect(await record(moved)).toEqual({
      strips_sent: 100,
      estimated_strips_remaining: 80,
      average_measurements_per_day: 4,
    });
  });

  it("bounds the value to a database integer and reads a null body as no data (400)", async () => {
    const big = await asr("PUT", `glucometer_supplies/${GW}/`, {
      estimated_strips_remaining: 2_147_483_648,
    });
    expect(big.json()).toEqual({
      estimated_strips_remaining: ["Ensure this value is less than or equal to 2147483647."],
    });
    ok(
      await asr("PUT", `glucometer_supplies/${GW}/`, { estimated_strips_remaining: 2_147_483_647 }),
    );
    await test(3, 3);
    expect(await record()).toMatchObject({ estimated_strips_remaining: 2_147_483_644 });
    expect((await asr("PUT", `glucometer_supplies/${GW}/`, null)).json()).toEqual({
      non_field_errors: ["No data provided"],
    });
    const threshold = await autoReorder({ strips_below: 2_147_483_648 });
    expect(threshold.json().strips_below[0]).toMatch(/less than or equal to 2147483647/);
  });

  it("a direct-cellular glucometer is keyed by its IMEI", async () => {
    const cellular = await activate(
      lab,
      { device: { name: "Vendor Cellular Glucometer", hardware_uuid: IMEI }, patient: PATIENT },
      lab.prod,
    );
    await test(3, 3, cellular.id, IMEI);
    expect(await record(IMEI)).toMatchObject({ strips_sent: 50, estimated_strips_remaining: 47 });
  });

  it("below the threshold, one strip order to the patient's address; none while it is on its way; shipped strips count", async () => {
    expect(ok(await autoReorder({ strips_below: 20 }))).toEqual({
      strips_below: 20,
      days_below: null,
      supply_name: "Glucometer Test Strips (50)",
    });
    const reorder = new AutoReorder(asrDeps(lab));
    await test(30, 4);
    expect(await reorder.sweep()).toEqual({ placed: 0, unshippable: 0 });
    await test(1, 4);
    expect(await reorder.sweep()).toEqual({ placed: 1, unshippable: 0 });
    const [order, ...more] = ok<Record<string, unknown>[]>(await asr("GET", "supply-requests/"));
    expect(more).toEqual([]);
    expect(order).toMatchObject({
      auto_reorder: true,
      supply_name: "Glucometer Test Strips (50)",
      gateway_id: GW,
      imei: "",
      related_client_device_id: glucometer.id,
      patient_id: "P-1",
      shipping_name: "Ada Patient",
      shipping_address: "1 Main St",
      shipping_zip_code: "92614",
      notify_emails: "ada@example.com",
      status: "pending",
    });
    await test(5, 4);
    expect(await reorder.sweep()).toEqual({ placed: 0, unshippable: 0 });
    // Shipped: its 50 strips are sent; once delivered, the next low estimate orders again.
    await lab.store.supplyRequests.update(order!.id as string, {
      status: "fulfilled",
      shippedOn: lab.clock.now(),
      deliveredOn: lab.clock.now(),
      nextAt: null,
    });
    expect(await record()).toMatchObject({ strips_sent: 100, estimated_strips_remaining: 64 });
    expect(await reorder.sweep()).toEqual({ placed: 0, unshippable: 0 });
  });

  it("an unlinked glucometer's automatic order is removed and no other is placed for it", async () => {
    ok(await autoReorder({ strips_below: 60 }));
    const reorder = new AutoReorder(asrDeps(lab));
    expect(await reorder.sweep()).toEqual({ placed: 1, unshippable: 0 });
    const [order] = ok<{ id: string; auto_reorder: boolean }[]>(
      await asr("GET", "supply-requests/"),
    );
    expect(order?.auto_reorder).toBe(true);
    const unlink = await send(lab.app, "GET", hwi(lab.prod, `unlink-gateway/${GW}/`), lab.prod.key);
    expect(unlink.statusCode, unlink.body).toBe(200);
    expect(await reorder.sweep()).toEqual({ placed: 0, unshippable: 0 });
    expect(ok(await asr("GET", "supply-requests/"))).toEqual([]);
    expect((await asr("GET", `glucometer_supplies/${GW}/`)).statusCode).toBe(404);
  });

  it("days_below goes by the daily use; a patient without an address is skipped and counted", async () => {
    ok(await autoReorder({ days_below: 7 }));
    const reorder = new AutoReorder(asrDeps(lab));
    await test(28, 4); // 22 strips left at 4 a day: 5.5 days
    await lab.store.patients.update(lab.prod.account.id, "P-1", { address: null, city: null });
    expect(await reorder.sweep()).toEqual({ placed: 0, unshippable: 1 });
    await lab.store.patients.update(lab.prod.account.id, "P-1", {
      address: "2 Oak Ave",
      city: "Irvine",
    });
    expect(await reorder.sweep()).toEqual({ placed: 1, unshippable: 0 });
    const [order] = ok<Record<string, unknown>[]>(await asr("GET", "supply-requests/"));
    expect(order).toMatchObject({ shipping_address: "2 Oak Ave" });
  });

  it("skips a patient whose address was PATCHed blank, and orders in the patient id for a blank name", async () => {
    ok(await autoReorder({ strips_below: 60 }));
    const reorder = new AutoReorder(asrDeps(lab));
    const patch = (body: Record<string, unknown>) =>
      send(lab.app, "PATCH", hwi(lab.prod, "hwi-patients/P-1/"), lab.prod.key, body);
    expect((await patch({ address: " " })).statusCode).toBe(200);
    expect(await reorder.sweep()).toEqual({ placed: 0, unshippable: 1 });
    expect((await patch({ address: "2 Oak Ave", name: "" })).statusCode).toBe(200);
    expect(await reorder.sweep()).toEqual({ placed: 1, unshippable: 0 });
    const [order] = ok<Record<string, unknown>[]>(await asr("GET", "supply-requests/"));
    expect(order).toMatchObject({ shipping_name: "P-1", shipping_address: "2 Oak Ave" });
  });

  it("days_below goes by the unrounded use: a light user's 0.29 strips a day still runs out", async () => {
    ok(await autoReorder({ days_below: 40 }));
    const reorder = new AutoReorder(asrDeps(lab));
    ok(await asr("PUT", `glucometer_supplies/${GW}/`, { estimated_strips_remaining: 10 }));
    await test(4, 4 / 14); // one every 3½ days: 0.29 a day (10 strips last 35 days), shown as 0
    expect(await record()).toMatchObject({ average_measurements_per_day: 0 });
    expect(await reorder.sweep()).toEqual({ placed: 1, unshippable: 0 });
  });

  it("days_below orders for a meter out of strips that is no longer used: no strips last no days", async () => {
    ok(await autoReorder({ days_below: 7 }));
    const reorder = new AutoReorder(asrDeps(lab));
    await test(50, 4); // the box used up, 4 a day
    lab.advance(20 * DAY); // then no strips, so no readings: no recent use
    expect(await record()).toEqual({
      strips_sent: 50,
      estimated_strips_remaining: 0,
      average_measurements_per_day: 0,
    });
    expect(await reorder.sweep()).toEqual({ placed: 1, unshippable: 0 });
    // A client's PUT of 0 for an unused meter orders too (spec 4.5: it drives reordering).
    await lab.store.supplyRequests.update(
      ok<{ id: string }[]>(await asr("GET", "supply-requests/"))[0]!.id,
      { status: "fulfilled", shippedOn: lab.clock.now(), deliveredOn: lab.clock.now() },
    );
    expect(await reorder.sweep()).toEqual({ placed: 0, unshippable: 0 });
    ok(await asr("PUT", `glucometer_supplies/${GW}/`, { estimated_strips_remaining: 0 }));
    expect(await reorder.sweep()).toEqual({ placed: 1, unshippable: 0 });
  });

  it("does not ship to an address verification found Invalid, until the client confirms it", async () => {
    ok(await autoReorder({ strips_below: 60 }));
    const reorder = new AutoReorder(asrDeps(lab));
    await lab.store.patients.update(lab.prod.account.id, "P-1", {
      addressStatus: "Invalid",
      confirmAddress: false,
    });
    expect(await reorder.sweep()).toEqual({ placed: 0, unshippable: 1 });
    await lab.store.patients.update(lab.prod.account.id, "P-1", { confirmAddress: true });
    expect(await reorder.sweep()).toEqual({ placed: 1, unshippable: 0 });
  });

  it("orders nothing while the account's ASR module is off, or once thresholds are removed", async () => {
    ok(await autoReorder({ strips_below: 60 }));
    const reorder = new AutoReorder(asrDeps(lab));
    await lab.store.accounts.update(lab.prod.account.id, { asrEnabled: false });
    expect(await reorder.sweep()).toEqual({ placed: 0, unshippable: 0 });
    await lab.store.accounts.update(lab.prod.account.id, { asrEnabled: true });
    const off = await lab.app.inject({
      method: "DELETE",
      url: "/lab/v1/accounts/acme/auto-reorder/",
      headers: ADMIN,
    });
    expect(off.statusCode).toBe(204);
    expect(await reorder.sweep()).toEqual({ placed: 0, unshippable: 0 });
    const get = await lab.app.inject({
      method: "GET",
      url: "/lab/v1/accounts/acme/auto-reorder/",
      headers: ADMIN,
    });
    expect(get.statusCode).toBe(404);
  });

  it("refuses thresholds that could never order (400 keyed by field)", async () => {
    const cases: [unknown, string, RegExp][] = [
      [{}, "non_field_errors", /Set strips_below, days_below or both/],
      [{ strips_below: 0 }, "strips_below", /greater than or equal to 1/],
      [
        { strips_below: 10, supply_name: "Lancets (100)" },
        "supply_name",
        /not a test strip supply/,
      ],
      [
        { strips_below: 10, supply_name: "Glucometer Test Strips (25)" },
        "supply_name",
        /deprecated/,
      ],
    ];
    for (const [body, field, message] of cases) {
      const res = await autoReorder(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()[field]?.[0], res.body).toMatch(message);
    }
    // Every mistake at once: a threshold that is no number does not hide a supply that is no strip.
    const both = await autoReorder({ strips_below: "ten", supply_name: "Lancets (100)" });
    expect(both.statusCode).toBe(400);
    expect(Object.keys(both.json()).sort()).toEqual(["strips_below", "supply_name"]);
    const unknown = await lab.app.inject({
      method: "PUT",
      url: "/lab/v1/accounts/nobody/auto-reorder/",
      headers: ADMIN,
      payload: { strips_below: 3 },
    });
    expect(unknown.statusCode).toBe(404);
  });
});
