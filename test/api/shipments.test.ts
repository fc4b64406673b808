import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ADMIN, hwi, type Lab, makeLab, send } from "./helpers.ts";
import { ADDRESS, activate, BPM, hwiCall, ok, QUIET } from "./hwi-fixtures.ts";

/** Spec 6.2 "shipment tracking GET responses": GET hwi-shipments/{id}/ as the client reads it. */
describe("hwi-shipments/{id}/", () => {
  let lab: Lab;
  let call: ReturnType<typeof hwiCall>;
  beforeEach(async () => {
    lab = await makeLab({ config: { fulfilment: QUIET } });
    call = hwiCall(lab);
  });
  afterEach(() => lab.close());

  it("gives the client the carrier, tracking link, dates and carrier history of its order", async () => {
    await call("POST", "hwi-patients/", { external_id: "P-1", name: "Pat One", ...ADDRESS });
    const device = await activate(lab, { device: { name: BPM }, patient: { external_id: "P-1" } });
    const pending = ok<Record<string, unknown>>(await call("GET", `hwi-shipments/${device.id}/`));
    expect(pending).toMatchObject({
      id: device.id,
      kind: "device",
      hwi_device_id: device.id,
      status: "Ready to Ship",
      carrier: null,
      tracking_link: null,
      shipped_on: null,
    });
    // What is the vendor's to know stays out: the account, the simulator's plans.
    for (const key of ["account_id", "client_domain", "next_status", "next_at", "halted"]) {
      expect(pending).not.toHaveProperty(key);
    }
    lab.advance(3_600_000);
    const moved = await lab.app.inject({
      method: "POST",
      url: `/lab/v1/orders/${device.id}/advance/`,
      headers: ADMIN,
      payload: { status: "In Transit" },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    const tracked = ok<Record<string, unknown>>(
      await call("GET", `hwi-shipments/${device.id.toUpperCase()}/`),
    );
    expect(tracked).toMatchObject({
      status: "In Transit",
      shipped_on: "2024-10-16T05:10:01.000000Z",
      delivered_on: null,
      tracking_link: expect.stringMatching(/^https:\/\/tracking\.rpmlab\.test\//),
      carrier: expect.any(String),
      tracking_number: expect.any(String),
      expected_delivery: expect.stringMatching(/Z$/),
    });
    expect((tracked.history as { status: string }[]).map((h) => h.status)).toEqual([
      "Ready to Ship",
      "Dropshipped",
      "In Transit",
    ]);
  });

  it("answers 404 for another account's order, an unknown id or a malformed one", async () => {
    await call("POST", "hwi-patients/", { external_id: "P-1", name: "Pat One", ...ADDRESS });
    const device = await activate(lab, { device: { name: BPM }, patient: { external_id: "P-1" } });
    const other = await send(
      lab.app,
      "GET",
      hwi(lab.other, `hwi-shipments/${device.id}/`),
      lab.other.key,
    );
    expect(other.statusCode).toBe(404);
    expect(other.json()).toEqual({ detail: "No Shipment matches the given query." });
    for (const id of ["e9c24a26-7d69-490f-9546-93c5a31486aa", "nope"]) {
      expect((await call("GET", `hwi-shipments/${id}/`)).statusCode, id).toBe(404);
    }
  });
});
