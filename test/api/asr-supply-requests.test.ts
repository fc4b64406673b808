import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_SEARCH_LENGTH } from "../../src/api/pagination.ts";
import { SupplyCatalogue } from "../../src/asr/supply-catalogue.ts";
import { SupplyShipping } from "../../src/asr/supply-shipping.ts";
import { TypedEvents } from "../../src/core/events.ts";
import { addBusinessTime } from "../../src/fulfilment/business-time.ts";
import type { FulfilmentEvents } from "../../src/fulfilment/events.ts";
import { asrDeps } from "./asr-fixtures.ts";
import { ADMIN, hwi, type Lab, makeLab, send } from "./helpers.ts";
import {
  activate,
  catalogue,
  DAY,
  type Envelope,
  GW,
  GW2,
  IMEI,
  knownGateway,
  ok,
} from "./hwi-fixtures.ts";

/** Spec 2.7, 3, 4.5: asr/supply-requests/ on the acme account (ASR enabled). */

const STRIPS = "Glucometer Test Strips (50)";
const HOUR = 3_600_000;
const SHIP_TO = {
  shipping_name: "Ada Patient",
  shipping_address: "1 Main St",
  shipping_city: "Irvine",
  shipping_state: "CA",
  shipping_zip_code: "92614",
};

interface Order extends Record<string, unknown> {
  id: string;
  status: string;
  shipped_on: string | null;
  delivered_on: string | null;
}

describe("asr/supply-requests/", () => {
  let lab: Lab;
  let glucometer: { id: string };
  let scale: { id: string };
  const asr = (method: "GET" | "POST" | "PUT" | "DELETE", path: string, body?: unknown) =>
    send(lab.app, method, `/clients/acme/asr/${path}`, lab.prod.key, body);

  beforeEach(async () => {
    lab = await makeLab();
    await knownGateway(lab, GW);
    await knownGateway(lab, GW2);
    const patient = { external_id: "P-1", name: "Ada Patient", ...addressOf(SHIP_TO) };
    glucometer = await activate(
      lab,
      { device: { name: "Vendor Glucometer", hardware_uuid: GW }, patient },
      lab.prod,
    );
    scale = await activate(
      lab,
      { device: { name: "Vendor Scale", hardware_uuid: GW2 }, patient },
      lab.prod,
    );
  });
  afterEach(() => lab.close());

  it("places a pending order for the glucometer's gateway, with the type and the patient", async () => {
    // Hyphens and lower case are the same gateway; the order spells it as the hardware does.
    const hyphenated = GW.toLowerCase().replace(/(..)(?!$)/g, "$1-");
    const res = await asr("POST", "supply-requests/", {
      supply_name: STRIPS,
      gateway_id: hyphenated,
      imei: "",
      ...SHIP_TO,
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(ok<Order[]>(await asr("GET", `supply-requests/?search=${GW}`))).toHaveLength(1);
    const strips = SupplyCatalogue.load(undefined, catalogue).byName(STRIPS)!;
    expect(res.json()).toMatchObject({
      order_type: "supply",
      supply_name: STRIPS,
      supply_type: { id: strips.id, name: STRIPS, hardware_uuid_required: true },
      status: "pending",
      auto_reorder: false,
      gateway_id: GW,
      imei: "",
      patient_id: "P-1",
      strips: 50,
      up_front_cost: strips.upFrontCost,
      shipped_on: null,
      delivered_on: null,
      tracking_link: null,
      ...SHIP_TO,
    });
  });

  it("400 keyed by every field at fault", async () => {
    const empty = await asr("POST", "supply-requests/", {});
    expect(empty.statusCode).toBe(400);
    expect(Object.keys(empty.json()).sort()).toEqual(
      ["supply_name", ...Object.keys(SHIP_TO)].sort(),
    );
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ supply_name: "glucometer test strips (50)" }, "supply_name", /names must match/],
      [{ supply_name: "Glucometer Test Strips (25)", gateway_id: GW }, "supply_name", /deprecated/],
      [{ supply_name: STRIPS }, "gateway_id", /send gateway_id, or imei/],
      [
        { supply_name: STRIPS, gateway_id: "AAAAAAAAAAAA" },
        "gateway_id",
        /No device of this account/,
      ],
      [{ supply_name: "BPM Cuff - XL", gateway_id: GW }, "gateway_id", /No device on .* takes/],
      [
        { supply_name: "Lancets (100)", related_client_device_id: scale.id },
        "related_client_device_id",
        /does not fit a Vendor Scale/,
      ],
      [{ supply_name: STRIPS, gateway_id: GW, imei: IMEI }, "imei", /not both/],
      [{ supply_name: STRIPS, gateway_id: IMEI }, "gateway_id", /is not a gateway id/],
      [{ supply_name: STRIPS, imei: GW }, "imei", /is not an IMEI/],
      // Any supply sent to hardware must fit a device on it, not only hardware_uuid_required ones.
      [{ supply_name: "AA Batteries (4)", gateway_id: GW }, "gateway_id", /No device on .* takes/],
      [
        { supply_name: STRIPS, gateway_id: GW2, related_client_device_id: glucometer.id },
        "related_client_device_id",
        /is on 297056120BD7/,
      ],
    ];
    for (const [body, field, message] of cases) {
      const res = await asr("POST", "supply-requests/", { ...SHIP_TO, ...body });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()[field]?.[0], JSON.stringify(res.json())).toMatch(message);
    }
    // The gateway of another account is not this account's hardware.
    await knownGateway(lab, "0123456789AB");
    await activate(
      lab,
      { device: { name: "Vendor Glucometer", hardware_uuid: "0123456789AB" } },
      lab.dev,
    );
    const foreign = await asr("POST", "supply-requests/", {
      ...SHIP_TO,
      supply_name: STRIPS,
      gateway_id: "0123456789AB",
    });
    expect(foreign.json().gateway_id[0]).toMatch(/No device of this account/);
    expect(ok<unknown[]>(await asr("GET", "supply-requests/"))).toEqual([]);
  });

  it("a body that is not an object is refused as DRF does", async () => {
    expect((await asr("POST", "supply-requests/", null)).json()).toEqual({
      non_field_errors: ["No data provided"],
    });
    expect((await asr("POST", "supply-requests/", [1])).json()).toEqual({
      non_field_errors: ["Invalid data. Expected a dictionary, but got list."],
    });
    const numeric = await asr("DELETE", "supply-requests/", { id: 5 });
    expect(numeric.json()).toEqual({ id: ["Not a valid string."] });
  });

  it("a supply needing hardware, ordered for its related device, shows and is found by that device's gateway id", async () => {
    const res = await asr("POST", "supply-requests/", {
      ...SHIP_TO,
      supply_name: STRIPS,
      related_client_device_id: glucometer.id,
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ gateway_id: GW, imei: "", patient_id: "P-1" });
    const found = ok<Order[]>(await asr("GET", `supply-requests/?search=${GW}`));
    expect(found.map((o) => o.id)).toEqual([res.json().id]);
  });

  it("on a gateway two patients share, the order is the patient's whose device the supply fits", async () => {
    // GW2 carries P-1's scale, activated first; P-2's glucometer joins it.
    await activate(
      lab,
      {
        device: { name: "Vendor Glucometer", hardware_uuid: GW2 },
        patient: { external_id: "P-2", name: "Bo Patient", ...addressOf(SHIP_TO) },
      },
      lab.prod,
    );
    const res = await asr("POST", "supply-requests/", {
      ...SHIP_TO,
      supply_name: STRIPS,
      gateway_id: GW2,
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ gateway_id: GW2, patient_id: "P-2" });
  });

  it("a supply without hardware_uuid_required ships on the related device alone", async () => {
    const res = await asr("POST", "supply-requests/", {
      ...SHIP_TO,
      supply_name: "Lancets (100)",
      related_client_device_id: glucometer.id,
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      related_client_device_id: glucometer.id,
      patient_id: "P-1",
      strips: null,
    });
  });

  it("ships after processing and is delivered days later, each step a SPECIAL_ORDER webhook", async () => {
    const shipping = new SupplyShipping({ ...asrDeps(lab), events: lab.events });
    await shipping.start();
    try {
      const placed = (
        await asr("POST", "supply-requests/", { ...SHIP_TO, supply_name: STRIPS, gateway_id: GW })
      ).json() as Order;
      const created = Date.parse(placed.created_on as string);
      // Processing is 1–2 business days (the fulfilment simulator's `processing`).
      lab.advance(addBusinessTime(created, DAY) - created - 1);
      await shipping.whenIdle();
      expect(ok<Order>(await asr("GET", `supply-requests/${placed.id}/`)).status).toBe("pending");
      lab.advance(12 * DAY);
      await shipping.whenIdle();
      const done = ok<Order>(await asr("GET", `supply-requests/${placed.id}/`));
      expect(done).toMatchObject({
        status: "fulfilled",
        carrier: expect.stringMatching(/^(ups|fedex|usps)$/),
      });
      expect(done.tracking_link).toMatch(/^https:\/\/tracking\.rpmlab\.test\//);
      const shipped = Date.parse(done.shipped_on!);
      expect(shipped - created).toBeGreaterThanOrEqual(DAY);
      expect(Date.parse(done.delivered_on!)).toBeGreaterThan(shipped);

      const outbox = await lab.store.transaction((tx) => tx.webhookOutbox.take(100));
      const entries = outbox.filter((e) => e.event === "SPECIAL_ORDER");
      // Ordered by gateway id alone, it is the glucometer's: the delivery log's hwi_device_id
      // filter finds its webhooks, as it does those of its patient_id.
      expect(entries.map((e) => [e.hwiDeviceId, e.patientId])).toEqual(
        Array(3).fill([glucometer.id, "P-1"]),
      );
      const bodies = entries.map((e) => e.body as Order);
      expect(bodies.map((b) => [b.status, b.shipped_on !== null, b.delivered_on !== null])).toEqual(
        [
          ["pending", false, false],
          ["fulfilled", true, false],
          ["fulfilled", true, true],
        ],
      );
      expect(bodies.every((b) => b.id === placed.id && b.patient_id === "P-1")).toBe(true);
      expect(bodies[2]).toEqual(done);
    } finally {
      await shipping.stop();
    }
  });

  it("ships an order another process sharing the store placed, without that process", async () => {
    // This process hears none of the other's events: only its look at the store finds the order.
    const shipping = new SupplyShipping({
      ...asrDeps(lab),
      events: new TypedEvents<FulfilmentEvents>(),
      resyncMs: HOUR,
    });
    await shipping.start();
    try {
      const placed = (
        await asr("POST", "supply-requests/", { ...SHIP_TO, supply_name: STRIPS, gateway_id: GW })
      ).json() as Order;
      const { nextAt: shipsAt } = (await lab.store.supplyRequests.getById(placed.id))!;
      lab.advance(14 * DAY);
      await shipping.whenIdle();
      const done = ok<Order>(await asr("GET", `supply-requests/${placed.id}/`));
      expect(done.status).toBe("fulfilled");
      // Applied at its due time, not at the look that found it.
      expect(Date.parse(done.shipped_on!)).toBe(shipsAt);
      expect(Date.parse(done.delivered_on!)).toBeGreaterThan(shipsAt!);
    } finally {
      await shipping.stop();
    }
  });

  it("a lab that was down catches up on start: steps apply in order, at their due times", async () => {
    const placed = (
      await asr("POST", "supply-requests/", { ...SHIP_TO, supply_name: STRIPS, gateway_id: GW })
    ).json() as Order;
    const { nextAt: shipsAt } = (await lab.store.supplyRequests.getById(placed.id))!;
    lab.advance(30 * DAY);
    const shipping = new SupplyShipping({ ...asrDeps(lab), events: lab.events });
    await shipping.start();
    await shipping.stop();
    const done = ok<Order>(await asr("GET", `supply-requests/${placed.id}/`));
    expect(Date.parse(done.shipped_on!)).toBe(shipsAt);
    expect(Date.parse(done.delivered_on!)).toBeGreaterThan(shipsAt!);
    expect(Date.parse(done.delivered_on!)).toBeLessThan(lab.clock.now() - 20 * DAY);
    // Each step's webhook is stamped updated_on when that step happened, not at the restart
    // (both would read the same instant, and a consumer keeping the newest by updated_on
    // would drop the delivery as no newer than the shipping).
    const outbox = await lab.store.transaction((tx) => tx.webhookOutbox.take(100));
    const steps = outbox
      .filter((e) => e.event === "SPECIAL_ORDER")
      .map((e) => e.body as Order)
      .map((b) => [b.status, b.updated_on]);
    expect(steps).toEqual([
      ["pending", placed.created_on],
      ["fulfilled", done.shipped_on],
      ["fulfilled", done.delivered_on],
    ]);
    expect(done.updated_on).toBe(done.delivered_on);
  });

  it("lists newest first; fulfilled and search filter; page gives the envelope", async () => {
    const a = (
      await asr("POST", "supply-requests/", { ...SHIP_TO, supply_name: STRIPS, gateway_id: GW })
    ).json() as Order;
    lab.advance(1000);
    const b = (
      await asr("POST", "supply-requests/", {
        ...SHIP_TO,
        supply_name: "AA Batteries (4)",
        related_client_device_id: scale.id,
        shipping_city: "Tustin",
      })
    ).json() as Order;
    await lab.store.supplyRequests.update(a.id, {
      status: "fulfilled",
      shippedOn: lab.clock.now(),
      carrier: "ups",
    });
    const ids = (res: Awaited<ReturnType<typeof asr>>) => ok<Order[]>(res).map((o) => o.id);
    expect(ids(await asr("GET", "supply-requests/"))).toEqual([b.id, a.id]);
    expect(ids(await asr("GET", "supply-requests/?fulfilled=true"))).toEqual([a.id]);
    expect(ids(await asr("GET", "supply-requests/?fulfilled=False"))).toEqual([b.id]);
    expect(ids(await asr("GET", "supply-requests/?search=tustin"))).toEqual([b.id]);
    expect(ids(await asr("GET", `supply-requests/?search=${GW.toLowerCase()}`))).toEqual([a.id]);
    // Any field: the carrier, a cost, the strips in the box, who placed it.
    expect(ids(await asr("GET", "supply-requests/?search=ups"))).toEqual([a.id]);
    const batteryCost = SupplyCatalogue.load(undefined, catalogue).byName("AA Batteries (4)")!;
    expect(ids(await asr("GET", `supply-requests/?search=${batteryCost.upFrontCost}`))).toContain(
      b.id,
    );
    expect(ids(await asr("GET", "supply-requests/?search=50"))).toContain(a.id);
    expect(ids(await asr("GET", "supply-requests/?search=client"))).toEqual([b.id, a.id]);
    // The supply type's fields (its description here), the dates, and order_type "supply".
    expect(ids(await asr("GET", "supply-requests/?search=one%20VIAL"))).toEqual([a.id]);
    expect(ids(await asr("GET", `supply-requests/?search=${a.created_on}`))).toEqual([a.id]);
    expect(ids(await asr("GET", "supply-requests/?search=SUPP"))).toEqual([b.id, a.id]);
    expect(ids(await asr("GET", "supply-requests/?fulfilled=TRUE"))).toEqual([a.id]);
    const page = ok<Envelope<Order>>(await asr("GET", "supply-requests/?page=1&page_size=1"));
    expect(page).toMatchObject({ count: 2, previous: null, results: [{ id: b.id }] });
    expect(page.next).toMatch(/page=2/);
    const bad = await asr("GET", "supply-requests/?fulfilled=maybe");
    expect(bad.statusCode).toBe(400);
    expect(bad.json().fulfilled[0]).toMatch(/maybe is not one of the available choices/);
  });

  it("a search longer than any searched field: 400 keyed search, not SQLite's LIKE limit (500)", async () => {
    await asr("POST", "supply-requests/", { ...SHIP_TO, supply_name: STRIPS, gateway_id: GW });
    const search = (text: string) => asr("GET", `supply-requests/?search=${text}`);
    expect(ok<Order[]>(await search("%25".repeat(MAX_SEARCH_LENGTH)))).toEqual([]);
    for (const text of ["a".repeat(MAX_SEARCH_LENGTH + 1), "a".repeat(50_000)]) {
      const res = await search(text);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toEqual({
        search: [`Ensure this field has no more than ${MAX_SEARCH_LENGTH} characters.`],
      });
    }
  });

  it("DELETE removes a pending request by ?id, body or path; a shipped one stays (400)", async () => {
    const place = async () =>
      (
        (
          await asr("POST", "supply-requests/", { ...SHIP_TO, supply_name: STRIPS, gateway_id: GW })
        ).json() as Order
      ).id;
    const [byQuery, byBody, byBodyBlankQuery, byPath, shipped] = [
      await place(),
      await place(),
      await place(),
      await place(),
      await place(),
    ];
    expect((await asr("DELETE", `supply-requests/?id=${byQuery}`)).statusCode).toBe(204);
    expect((await asr("DELETE", "supply-requests/", { id: byBody })).statusCode).toBe(204);
    // A blank ?id= names nothing: the body's id counts.
    const blank = await asr("DELETE", "supply-requests/?id=", { id: byBodyBlankQuery });
    expect(blank.statusCode, blank.body).toBe(204);
    expect((await asr("DELETE", `supply-requests/${byPath}/`)).statusCode).toBe(204);
    await lab.store.supplyRequests.update(shipped, {
      status: "fulfilled",
      shippedOn: lab.clock.now(),
    });
    const refused = await asr("DELETE", `supply-requests/${shipped}/`);
    expect(refused.statusCode).toBe(400);
    expect(refused.json().id[0]).toMatch(/Only a pending supply request/);
    expect((await asr("DELETE", `supply-requests/${byQuery}/`)).statusCode).toBe(404);
    expect((await asr("GET", `supply-requests/${byPath}/`)).statusCode).toBe(404);
    expect((await asr("DELETE", "supply-requests/")).json()).toEqual({
      id: ["This field is required."],
    });
    expect(ok<Order[]>(await asr("GET", "supply-requests/")).map((o) => o.id)).toEqual([shipped]);
  });

  it("unlinking a glucometer removes its pending supply orders: they never ship nor bill; shipped ones and other devices' stay", async () => {
    const shipping = new SupplyShipping({ ...asrDeps(lab), events: lab.events });
    await shipping.start();
    try {
      const place = async (body: Record<string, unknown>) => {
        const res = await asr("POST", "supply-requests/", { ...SHIP_TO, ...body });
        expect(res.statusCode, res.body).toBe(201);
        return (res.json() as Order).id;
      };
      const strips = await place({ supply_name: STRIPS, gateway_id: GW });
      const lancets = await place({
        supply_name: "Lancets (100)",
        related_client_device_id: glucometer.id,
      });
      const onItsWay = await place({ supply_name: STRIPS, gateway_id: GW });
      await lab.store.supplyRequests.update(onItsWay, {
        status: "fulfilled",
        shippedOn: lab.clock.now(),
      });
      const batteries = await place({
        supply_name: "AA Batteries (4)",
        related_client_device_id: scale.id,
      });
      const unlink = await send(
        lab.app,
        "POST",
        hwi(lab.prod, `unlink-gateway/${GW}/`),
        lab.prod.key,
      );
      expect(unlink.statusCode, unlink.body).toBe(200);

      for (const id of [strips, lancets]) {
        expect((await asr("GET", `supply-requests/${id}/`)).statusCode).toBe(404);
      }
      lab.advance(30 * DAY);
      await shipping.whenIdle();
      const orders = ok<Order[]>(await asr("GET", "supply-requests/"));
      expect(orders.map((o) => [o.id, o.status]).sort()).toEqual(
        [
          [onItsWay, "fulfilled"],
          [batteries, "fulfilled"],
        ].sort(),
      );
      // Removed as a client's DELETE removes one (spec 3): their webhooks are the placing ones
      // alone; the unlink's Unlinked fulfilment webhook says what happened.
      const outbox = await lab.store.transaction((tx) => tx.webhookOutbox.take(100));
      const steps = outbox
        .filter((e) => e.event === "SPECIAL_ORDER")
        .map((e) => e.body as Order)
        .filter((b) => b.id === strips || b.id === lancets)
        .map((b) => b.status);
      expect(steps).toEqual(["pending", "pending"]);
    } finally {
      await shipping.stop();
    }
  });

  it("refuses an order for an unlinked device (400 keyed related_client_device_id)", async () => {
    const unlink = await send(
      lab.app,
      "POST",
      hwi(lab.prod, `unlink-gateway/${glucometer.id}/`),
      lab.prod.key,
    );
    expect(unlink.statusCode, unlink.body).toBe(200);
    for (const supply_name of ["Lancets (100)", STRIPS]) {
      const res = await asr("POST", "supply-requests/", {
        ...SHIP_TO,
        supply_name,
        related_client_device_id: glucometer.id,
      });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toEqual({
        related_client_device_id: [
          `Device ${glucometer.id} is unlinked: it is no longer with a patient, so no supply is sent for it.`,
        ],
      });
    }
    expect(ok<Order[]>(await asr("GET", "supply-requests/"))).toEqual([]);
  });

  it("a device request that is Cancelled takes its pending supply orders with it: they never ship nor bill", async () => {
    // A second glucometer requested for the patient, not shipped yet, and lancets for it.
    const requested = await activate(
      lab,
      { device: { name: "Vendor Glucometer" }, patient: { external_id: "P-1" } },
      lab.prod,
    );
    expect(requested.hardware_uuid).toBeNull();
    const place = async (body: Record<string, unknown>) => {
      const res = await asr("POST", "supply-requests/", { ...SHIP_TO, ...body });
      expect(res.statusCode, res.body).toBe(201);
      return (res.json() as Order).id;
    };
    const lancets = await place({
      supply_name: "Lancets (100)",
      related_client_device_id: requested.id,
    });
    const strips = await place({ supply_name: STRIPS, gateway_id: GW });
    // Spec 3: a pending device order cancelled (duplicate clean-up) is removed.
    const cancel = await lab.app.inject({
      method: "POST",
      url: `/lab/v1/orders/${requested.id}/advance/`,
      headers: ADMIN,
      payload: { status: "Cancelled" },
    });
    expect(cancel.statusCode, cancel.body).toBe(200);
    expect((await asr("GET", `supply-requests/${lancets}/`)).statusCode).toBe(404);
    expect(ok<Order[]>(await asr("GET", "supply-requests/")).map((o) => o.id)).toEqual([strips]);
  });

  it("bills each order in the month it shipped, at its prices when ordered (spec 1.4)", async () => {
    const place = async (supply_name: string, extra: Record<string, unknown>) =>
      (
        (
          await asr("POST", "supply-requests/", { ...SHIP_TO, supply_name, ...extra })
        ).json() as Order
      ).id;
    const strips = await place(STRIPS, { gateway_id: GW });
    const batteries = await place("AA Batteries (4)", { related_client_device_id: scale.id });
    const later = await place(STRIPS, { gateway_id: GW });
    const november = Date.UTC(2024, 10, 2);
    for (const [id, at] of [
      [strips, lab.clock.now()],
      [batteries, lab.clock.now()],
      [later, november],
    ] as const) {
      await lab.store.supplyRequests.update(id, { status: "fulfilled", shippedOn: at });
    }
    const billing = async (month: string) => {
      const res = await lab.app.inject({
        method: "GET",
        url: `/lab/v1/billing/?month=${month}&account=acme`,
        headers: ADMIN,
      });
      return ok<{ accounts: { supplies: { id: string }[]; supply_charges: string }[] }>(res)
        .accounts[0]!;
    };
    const types = SupplyCatalogue.load(undefined, catalogue);
    const cost = (name: string) => {
      const t = types.byName(name)!;
      return Math.round((Number(t.upFrontCost) + Number(t.shippingCost)) * 100);
    };
    const october = await billing("2024-10");
    expect(october.supplies.map((c) => c.id).sort()).toEqual([strips, batteries].sort());
    expect(october.supply_charges).toBe(
      ((cost(STRIPS) + cost("AA Batteries (4)")) / 100).toFixed(2),
    );
    const next = await billing("2024-11");
    expect(next.supplies.map((c) => c.id)).toEqual([later]);
    expect(next.supply_charges).toBe((cost(STRIPS) / 100).toFixed(2));
  });

  it("is another account's: 404 across accounts, 403 while its ASR module is off", async () => {
    const id = (
      (
        await asr("POST", "supply-requests/", { ...SHIP_TO, supply_name: STRIPS, gateway_id: GW })
      ).json() as Order
    ).id;
    await lab.store.accounts.update(lab.other.account.id, { asrEnabled: true });
    const other = (path: string) =>
      send(lab.app, "GET", `/clients/other-dev/asr/${path}`, lab.other.key);
    expect((await other(`supply-requests/${id}/`)).statusCode).toBe(404);
    expect(ok<unknown[]>(await other("supply-requests/"))).toEqual([]);
    const off = await send(lab.app, "GET", "/clients/acme-dev/asr/supply-requests/", lab.dev.key);
    expect(off.statusCode).toBe(403);
  });
});

function addressOf(shipping: typeof SHIP_TO) {
  return {
    address: shipping.shipping_address,
    city: shipping.shipping_city,
    state: shipping.shipping_state,
    zip_code: shipping.shipping_zip_code,
  };
}
