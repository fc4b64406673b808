import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { deviceMacAddress } from "../../src/fulfilment/identifiers.ts";
import { apiKey, hwi, type Lab, makeLab, T0 } from "./helpers.ts";
import {
  activate,
  BPM,
  DAY,
  type Envelope,
  follow,
  GW,
  GW2,
  hwiCall,
  IMEI,
  knownGateway,
  labServices,
  ok,
} from "./hwi-fixtures.ts";

const GW3 = "ABCDEF012345";

/** Spec 2.2, 2.3, 4.2 and the spec 7 / 8 rows of gateways. */
describe("gateways", () => {
  let lab: Lab;
  let call: ReturnType<typeof hwiCall>;
  beforeEach(async () => {
    lab = await makeLab();
    call = hwiCall(lab);
  });
  afterEach(() => lab.close());

  /** Three associated gateways: GW measured and shipped, GW2 measured, GW3 neither. */
  async function threeGateways() {
    for (const [uuid, signal] of [
      [GW, 30],
      [GW2, 0],
      [GW3, 12],
    ] as const) {
      await knownGateway(lab, uuid, signal);
      await activate(lab, { device: { name: BPM, hardware_uuid: uuid } });
    }
    await lab.store.gateways.recordMeasurement(GW, T0 - DAY);
    await lab.store.gateways.recordMeasurement(GW2, T0 - 2 * DAY);
    await lab.store.gateways.setShipped(GW, T0 - 10 * DAY);
  }

  const uuids = async (query: string) =>
    ok<Envelope<{ gateway_uuid: string }>>(await call("GET", `hwi-gateways/${query}`)).results.map(
      (g) => g.gateway_uuid,
    );

  it("hwi-gateways answers the envelope even without page, items as spec 2.2", async () => {
    await threeGateways();
    const body = ok<Envelope>(
      await call("GET", "hwi-gateways/?ordering=-last_measurement&page_size=100"),
    );
    expect(body).toMatchObject({ count: 3, next: null, previous: null });
    expect(body.results[0]).toEqual({
      gateway_uuid: GW3,
      last_signal_strength: 12,
      last_measurement: null,
      shipped_on: null,
      assigned_on: "2024-10-16T04:10:02.000000Z",
    });
    expect(body.results[1]).toEqual({
      gateway_uuid: GW,
      last_signal_strength: 30,
      last_measurement: "2024-10-15T04:10:00.000000Z",
      shipped_on: "2024-10-06T04:10:00.000000Z",
      assigned_on: "2024-10-16T04:10:00.000000Z",
    });
    for (const g of body.results) {
      expect(g.last_signal_strength).toBeGreaterThanOrEqual(0);
      expect(g.last_signal_strength).toBeLessThanOrEqual(30);
    }
    // Another account's gateways never show.
    expect(ok<Envelope>(await hwiCall(lab, lab.other)("GET", "hwi-gateways/")).count).toBe(0);
  });

  it("ordering by each field, ascending and descending (nulls last ascending)", async () => {
    await threeGateways();
    expect(await uuids("?ordering=assigned_on")).toEqual([GW, GW2, GW3]);
    expect(await uuids("?ordering=-assigned_on")).toEqual([GW3, GW2, GW]);
    expect(await uuids("?ordering=last_measurement")).toEqual([GW2, GW, GW3]);
    expect(await uuids("?ordering=-last_measurement")).toEqual([GW3, GW, GW2]);
    expect(await uuids("?ordering=shipped_on")).toEqual([GW, GW2, GW3]);
    expect(await uuids("?ordering=-shipped_on")).toEqual([GW2, GW3, GW]);
    const bad = await call("GET", "hwi-gateways/?ordering=created");
    expect(bad.statusCode).toBe(400);
    expect(Object.keys(bad.json())).toEqual(["ordering"]);
  });

  it("last_measurement__isnull and shipped_on__isnull, both directions; bad values 400", async () => {
    await threeGateways();
    expect(await uuids("?last_measurement__isnull=true")).toEqual([GW3]);
    expect(await uuids("?last_measurement__isnull=false")).toEqual([GW, GW2]);
    expect(await uuids("?shipped_on__isnull=false")).toEqual([GW]);
    expect(await uuids("?shipped_on__isnull=True&last_measurement__isnull=0")).toEqual([GW2]);
    const bad = await call("GET", "hwi-gateways/?shipped_on__isnull=maybe");
    expect(bad.json()).toEqual({ shipped_on__isnull: ["Must be a valid boolean."] });
  });

  it("pages with page and page_size, next/previous absolute", async () => {
    await threeGateways();
    const first = ok<Envelope>(await call("GET", "hwi-gateways/?page_size=2&ordering=assigned_on"));
    expect(first.results).toHaveLength(2);
    expect(first.next).toMatch(/^http:\/\/localhost\/clients\/acme-dev\/hwi\/hwi-gateways\/\?/);
    expect(new URL(first.next!).searchParams.get("page")).toBe("2");
    const second = ok<Envelope>(await follow(lab, first.next!));
    expect(second).toMatchObject({ count: 3, next: null, results: [{ gateway_uuid: GW3 }] });
    expect(new URL(second.previous!).searchParams.get("page")).toBe("1");
  });

  it("gateway-info: 404 until associated, then 200 with any case and hyphens (spec 4.2, 7.3)", async () => {
    await lab.store.gateways.updateStatus(GW2, {
      lastSignalStrength: 21,
      lastCheckinTime: T0 - 1000,
      firmwareVersion: "2.1.0",
      bootloaderVersion: "1.0.3",
      provisioned: true,
    });
    const before = await call("GET", `gateway-info/${GW2}/`);
    expect(before.statusCode).toBe(404);
    expect(before.json()).toEqual({ detail: "No Gateway matches the given query." });
    const device = await activate(lab, { device: { name: "Vendor Scale", hardware_uuid: GW2 } });
    for (const form of [GW2, GW2.toLowerCase(), "FE-D0-91-A6-43-FF"]) {
      expect(ok(await call("GET", `gateway-info/${form}/`))).toEqual({
        gateway_uuid: GW2,
        firmware_version: "2.1.0",
        bootloader_version: "1.0.3",
        provisioned: true,
        last_signal_strength: 21,
        last_checkin_time: "2024-10-16T04:09:59.000000Z",
        assigned_on: "2024-10-16T04:10:00.000000Z",
        shipped_on: null,
        whitelisted_devices: [
          {
            sensor_code: "34",
            mac_address: deviceMacAddress(device.id),
            whitelist_status: "RE",
            created: "2024-10-16T04:10:00.000000Z",
            modified: "2024-10-16T04:10:00.000000Z",
          },
        ],
        properties: [],
      });
    }
    expect((await hwiCall(lab, lab.other)("GET", `gateway-info/${GW2}/`)).statusCode).toBe(404);
    expect((await call("GET", "gateway-info/not-a-gateway/")).statusCode).toBe(404);
  });

  it("gateway-info answers once an unknown gateway id activated earlier shows up", async () => {
    await activate(lab, { device: { name: BPM, hardware_uuid: GW3 } });
    expect((await call("GET", `gateway-info/${GW3}/`)).statusCode).toBe(404);
    await labServices(lab).adoption.register(GW3, {
      lastSignalStrength: 9,
      lastCheckinTime: lab.clock.now(),
    });
    expect(ok(await call("GET", `gateway-info/${GW3}/`))).toMatchObject({
      gateway_uuid: GW3,
      last_signal_strength: 9,
    });
    // Spec 2.3: 0 once the gateway has not checked in recently (the lab's "recently": an hour).
    lab.clock.runSync({ until: lab.clock.now() + 60 * 60_000 });
    expect(ok(await call("GET", `gateway-info/${GW3}/`))).toMatchObject({
      last_signal_strength: 9,
    });
    lab.clock.runSync({ until: lab.clock.now() + 1 });
    expect(ok(await call("GET", `gateway-info/${GW3}/`))).toMatchObject({
      last_signal_strength: 0,
    });
    const listed = ok<Envelope<{ gateway_uuid: string; last_signal_strength: number }>>(
      await call("GET", "hwi-gateways/"),
    ).results.find((g) => g.gateway_uuid === GW3);
    expect(listed?.last_signal_strength).toBe(0);
  });
});

/** Spec 4.2 unlink-gateway; wire-formats "Unlink": both verbs, both id forms. */
describe("unlink-gateway/{id}/", () => {
  let lab: Lab;
  let call: ReturnType<typeof hwiCall>;
  beforeEach(async () => {
    lab = await makeLab();
    call = hwiCall(lab);
    await knownGateway(lab);
  });
  afterEach(() => lab.close());

  async function twoOnGateway() {
    const bpm = await activate(lab, {
      device: { name: BPM, hardware_uuid: GW },
      patient: { external_id: "P-1" },
    });
    const scale = await activate(lab, { device: { name: "Vendor Scale", hardware_uuid: GW } });
    return { bpm, scale };
  }

  for (const method of ["POST", "GET"] as const) {
    it(`${method} by gateway id unlinks every device of the gateway and says so`, async () => {
      const { bpm, scale } = await twoOnGateway();
      lab.recorded.length = 0;
      const res = await call(method, "unlink-gateway/29-70-56-12-0b-d7/");
      expect(ok(res)).toEqual({
        detail: `Unlinked 2 devices of gateway ${GW}.`,
        unlinked_by: "gateway_id",
        id: GW,
        devices: [
          { hwi_device_id: bpm.id, previous_hardware_uuid: GW, status: "Unlinked" },
          { hwi_device_id: scale.id, previous_hardware_uuid: GW, status: "Unlinked" },
        ],
      });
      const after = ok<{ hardware_uuid: null; status: string }>(
        await call("GET", `hwi-devices/${bpm.id}/`),
      );
      expect(after).toMatchObject({ hardware_uuid: null, status: "Unlinked" });
      // Spec 6.2: an Unlinked fulfilment event per device, device_id = the prior uuid.
      expect(lab.recorded.map((e) => e.name)).toEqual(["fulfilment.status", "fulfilment.status"]);
      expect(lab.recorded[0]!.payload).toMatchObject({
        status: "Unlinked",
        previousHardwareUuid: GW,
        patientExternalId: "P-1",
      });
      // Repeating succeeds and changes nothing.
      expect(ok(await call(method, `unlink-gateway/${GW}/`))).toMatchObject({
        unlinked_by: "gateway_id",
        devices: [],
        detail: `Nothing to unlink on gateway ${GW}: already unlinked.`,
      });
    });

    it(`${method} by hwi_device_id unlinks that device only`, async () => {
      const { bpm, scale } = await twoOnGateway();
      const res = ok<{ devices: unknown[] }>(
        await call(method, `unlink-gateway/${bpm.id.toUpperCase()}/`),
      );
      expect(res).toMatchObject({
        unlinked_by: "hwi_device_id",
        id: bpm.id,
        devices: [{ hwi_device_id: bpm.id, previous_hardware_uuid: GW }],
      });
      const still = ok<{ hardware_uuid: string }>(await call("GET", `hwi-devices/${scale.id}/`));
      expect(still.hardware_uuid).toBe(GW);
    });
  }

  it("an IMEI unlinks the direct-cellular device on it; logs record every unlink", async () => {
    const cell = await activate(lab, {
      device: { name: "Vendor Cellular Scale", hardware_uuid: IMEI },
    });
    expect(ok(await call("POST", `unlink-gateway/${IMEI}/`))).toMatchObject({
      unlinked_by: "imei",
      id: IMEI,
      devices: [{ hwi_device_id: cell.id, previous_hardware_uuid: IMEI }],
    });
    const logs = ok<{ reason: string; hardware_uuid: string | null }[]>(
      await call("GET", "hwi-hardware-uuid-logs/"),
    );
    expect(logs.map((l) => [l.reason, l.hardware_uuid])).toEqual([
      ["activation", IMEI],
      ["unlink", null],
    ]);
  });

  it("404 for an id the account does not have; a JSON body is ignored", async () => {
    for (const id of [GW2, "00000000-0000-4000-8000-000000000000", IMEI, "nonsense"]) {
      const res = await call("POST", `unlink-gateway/${id}/`, { reason: "ignored" });
      expect(res.statusCode).toBe(404);
      expect(res.json().detail).toMatch(/^Nothing to unlink/);
    }
    expect((await call("DELETE", `unlink-gateway/${GW}/`)).statusCode).toBe(405);
  });

  it("a body of any type, malformed JSON included, is ignored: the unlink happens (200)", async () => {
    const bodies = [
      { "content-type": "application/x-www-form-urlencoded", payload: `gateway_id=${GW}` },
      { "content-type": "text/plain", payload: "unlink please" },
      { "content-type": "application/json", payload: '{"gateway_id":' },
      { "content-type": "application/json; charset=nonsense", payload: "{}" },
    ];
    for (const { payload, ...type } of bodies) {
      await twoOnGateway();
      const res = await lab.app.inject({
        method: "POST",
        url: hwi(lab.dev, `unlink-gateway/${GW}/`),
        headers: { ...apiKey(lab.dev.key), ...type },
        payload,
      });
      expect(res.statusCode, `${type["content-type"]}: ${res.body}`).toBe(200);
      expect(res.json()).toMatchObject({ unlinked_by: "gateway_id", devices: [{}, {}] });
    }
  });

  it("an unlinked gateway stays the account's: gateway-info answers, its devices come back, another account is refused", async () => {
    await twoOnGateway();
    ok(await call("POST", `unlink-gateway/${GW}/`));
    expect(ok<{ gateway_uuid: string }>(await call("GET", `gateway-info/${GW}/`))).toMatchObject({
      gateway_uuid: GW,
    });
    const again = await activate(lab, { device: { name: BPM, hardware_uuid: GW } });
    expect(again.hardware_uuid).toBe(GW);
    const other = await hwiCall(lab, lab.other)("POST", "hwi-devices/", {
      device: { name: "Vendor Scale", hardware_uuid: GW },
    });
    expect(other.statusCode).toBe(400);
    expect(other.json()).toEqual({
      device: { hardware_uuid: [expect.stringMatching(/assigned to another account/)] },
    });
  });

  it("HEAD is refused with 405 and unlinks nothing (a link checker must not unlink)", async () => {
    const { bpm } = await twoOnGateway();
    const res = await call("HEAD", `unlink-gateway/${GW}/`);
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe("GET, POST");
    const still = ok<{ hardware_uuid: string }>(await call("GET", `hwi-devices/${bpm.id}/`));
    expect(still.hardware_uuid).toBe(GW);
  });
});
