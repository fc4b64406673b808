import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hwi, type Lab, makeLab, T0 } from "./helpers.ts";
import {
  activate,
  BPM,
  GW,
  GW2,
  hwiCall,
  IMEI,
  knownGateway,
  labServices,
} from "./hwi-fixtures.ts";

/** Every key of the device record (wire-formats "Devices" plus spec 2.4), in order. */
const RECORD_KEYS = [
  "id",
  "hwi_device_id",
  "device",
  "patient",
  "patient_id",
  "patient_phone_number",
  "status",
  "hardware_uuid",
  "sensor_id",
  "properties",
  "require_signature",
  "ship_gateway_only",
];

/** Spec 2.4, 4.3 (devices) and the spec 7 rows they touch. */
describe("hwi-devices", () => {
  let lab: Lab;
  let call: ReturnType<typeof hwiCall>;
  beforeEach(async () => {
    lab = await makeLab();
    call = hwiCall(lab);
  });
  afterEach(() => lab.close());

  describe("POST (activation)", () => {
    it("201 with the device record on a known gateway: Active, ids, ISO times, nested patient", async () => {
      await knownGateway(lab);
      const res = await call("POST", "hwi-devices/", {
        device: { name: BPM, hardware_uuid: "29-70-56-12-0b-d7" },
        patient: { external_id: "AnExternalID" },
      });
      expect(res.statusCode).toBe(201);
      const body = res.json();
      expect(Object.keys(body)).toEqual(RECORD_KEYS);
      expect(body).toMatchObject({
        hwi_device_id: body.id,
        device: {
          name: BPM,
          sensor_code: "10",
          hardware_uuid: GW,
          created: "2024-10-16T04:10:00.000000Z",
          fulfillment_request: null,
          meta_data: null,
          shared_hardware_uuid: false,
        },
        patient: {
          external_id: "AnExternalID",
          name: null,
          phone_number: null,
          email: null,
          physician: null,
          clinic_name: null,
          care_manager: null,
          sms_opt_in: true,
        },
        patient_id: "AnExternalID",
        patient_phone_number: null,
        status: "Active",
        hardware_uuid: GW,
        sensor_id: null,
        properties: [],
        require_signature: false,
        ship_gateway_only: false,
      });
      expect(body.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(body.device.id).not.toBe(body.id);
      // Spec 2.1: the nested patient was created, holding only its external_id.
      const patient = await call("GET", "hwi-patients/AnExternalID/");
      expect(patient.json()).toMatchObject({ external_id: "AnExternalID", name: null });
      expect(lab.recorded.map((e) => e.name)).toEqual(["device.activated"]);
    });

    it("an unknown gateway id still answers 201, with status Unknown Gateway ID (wire-formats)", async () => {
      const body = await activate(lab, { device: { name: BPM, hardware_uuid: GW2 } });
      expect(body.status).toBe("Unknown Gateway ID");
      expect(body.hardware_uuid).toBe(GW2);
      await labServices(lab).adoption.register(GW2);
      expect((await call("GET", `hwi-devices/${body.id}/`)).json().status).toBe("Active");
    });

    it("maps the legacy name Vendor BPM - L to Vendor BPM - Wide Range (spec 2.4)", async () => {
      const body = await activate(lab, { device: { name: "Vendor BPM - L", hardware_uuid: GW } });
      expect(body.device).toMatchObject({ name: BPM });
    });

    it("a direct-cellular device on its IMEI: Active, sensor_code null", async () => {
      const body = await activate(lab, {
        device: { name: "Vendor Cellular BPM", hardware_uuid: IMEI },
        patient: { external_id: "P-1" },
      });
      expect(body).toMatchObject({ status: "Active", hardware_uuid: IMEI });
      expect(body.device).toMatchObject({ sensor_code: null });
    });

    it("without hardware: a fulfilment request, Client Action Required without an address", async () => {
      const body = await activate(lab, {
        device: { name: "Vendor Scale" },
        patient: { external_id: "P-1" },
        require_signature: "yes",
        delivery_type: "Priority",
      });
      expect(body).toMatchObject({
        status: "Client Action Required",
        hardware_uuid: null,
        require_signature: true,
      });
      expect(body.device).toMatchObject({
        fulfillment_request: {
          delivery_type: "Priority",
          require_signature: true,
          ship_gateway_only: false,
          created: "2024-10-16T04:10:00.000000Z",
        },
      });
    });

    it("400 keyed by field, nested as the body is (spec 7.1)", async () => {
      const res = await call("POST", "hwi-devices/", {
        device: { name: "Vendor BPM - M", hardware_uuid: "xyz" },
        patient: { external_id: "" },
        require_signature: "maybe",
      });
      expect(res.statusCode).toBe(400);
      const body = res.json();
      expect(Object.keys(body).sort()).toEqual(["device", "patient", "require_signature"]);
      expect(body.device.name[0]).toMatch(/"Vendor BPM - M" is not a valid device name/);
      expect(body.patient).toEqual({ external_id: ["This field may not be blank."] });
      expect(body.require_signature).toEqual(["Must be a valid boolean."]);
      expect((await call("POST", "hwi-devices/", {})).json()).toEqual({
        device: ["This field is required."],
      });
      expect((await call("POST", "hwi-devices/", [1])).json()).toEqual({
        non_field_errors: ["Invalid data. Expected a dictionary, but got list."],
      });
      const badGateway = await call("POST", "hwi-devices/", {
        device: { name: BPM, hardware_uuid: "xyz" },
      });
      expect(Object.keys(badGateway.json().device)).toEqual(["hardware_uuid"]);
    });

    it("a JSON null body is DRF's 'No data provided', on every device write as on hwi-patients", async () => {
      await knownGateway(lab);
      const device = await activate(lab, { device: { name: BPM, hardware_uuid: GW } });
      for (const [method, path] of [
        ["POST", "hwi-devices/"],
        ["PUT", `hwi-devices/${device.id}/`],
        ["POST", `hwi-devices/${device.id}/properties/`],
        ["POST", "hwi-replacements/"],
        ["POST", "hwi-patients/"],
      ] as const) {
        const res = await call(method, path, null);
        expect(res.statusCode, path).toBe(400);
        expect(res.json(), path).toEqual({ non_field_errors: ["No data provided"] });
      }
    });

    it("one device per sensor code per gateway (spec 2.8): 400 keyed device.hardware_uuid", async () => {
      await knownGateway(lab);
      await activate(lab, { device: { name: BPM, hardware_uuid: GW } });
      const res = await call("POST", "hwi-devices/", {
        device: { name: "Vendor BPM - S", hardware_uuid: GW },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().device.hardware_uuid[0]).toMatch(/only one device per sensor code/);
      // Another sensor code shares the gateway.
      const scale = await activate(lab, { device: { name: "Vendor Scale", hardware_uuid: GW } });
      expect(scale.device).toMatchObject({ shared_hardware_uuid: true });
    });

    it("a body that is not JSON is 415; without a key 401 (spec 7.2)", async () => {
      const res = await lab.app.inject({
        method: "POST",
        url: hwi(lab.dev, "hwi-devices/"),
        headers: { authorization: `Api-Key ${lab.dev.key}`, "content-type": "text/plain" },
        payload: "device",
      });
      expect(res.statusCode).toBe(415);
      const anonymous = await lab.app.inject({ method: "POST", url: hwi(lab.dev, "hwi-devices/") });
      expect(anonymous.statusCode).toBe(401);
    });
  });

  describe("GET one, PUT, and what the spec does not list", () => {
    it("GET answers the record; an unknown or malformed id is 404 with Django's text", async () => {
      const created = await activate(lab, { device: { name: BPM, hardware_uuid: GW } });
      const res = await call("GET", `hwi-devices/${created.id.toUpperCase()}/`);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ ...created });
      for (const id of ["00000000-0000-4000-8000-000000000000", "nope"]) {
        const missing = await call("GET", `hwi-devices/${id}/`);
        expect(missing.statusCode).toBe(404);
        expect(missing.json()).toEqual({ detail: "No Device matches the given query." });
      }
    });

    it("PUT changes only the nested patient; other keys are ignored (spec 4.3)", async () => {
      const created = await activate(lab, { device: { name: BPM, hardware_uuid: GW } });
      const res = await call("PUT", `hwi-devices/${created.id}/`, {
        device: { name: "Vendor Scale", hardware_uuid: GW2 },
        status: "Delivered",
        require_signature: true,
        patient: { external_id: "P-9", name: "Pat Nine", phone_number: "555-0100" },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        device: { name: BPM, hardware_uuid: GW },
        status: created.status,
        require_signature: false,
        patient: { external_id: "P-9", name: "Pat Nine", phone_number: "555-0100" },
        patient_id: "P-9",
        patient_phone_number: "555-0100",
      });
      const detached = await call("PUT", `hwi-devices/${created.id}/`, { patient: null });
      expect(detached.json()).toMatchObject({ patient: null, patient_id: null });
      const noPatient = await call("PUT", `hwi-devices/${created.id}/`, { patient: { name: "x" } });
      expect(noPatient.statusCode).toBe(400);
      expect(Object.keys(noPatient.json().patient)).toEqual(["external_id"]);
      const unknown = await call("PUT", "hwi-devices/00000000-0000-4000-8000-000000000000/", {});
      expect(unknown.statusCode).toBe(404);
    });

    it("no DELETE and no PATCH: 405 with Allow (spec 4.3 lists neither)", async () => {
      const created = await activate(lab, { device: { name: BPM, hardware_uuid: GW } });
      for (const method of ["DELETE", "PATCH"] as const) {
        const res = await call(method, `hwi-devices/${created.id}/`, {});
        expect(res.statusCode).toBe(405);
        expect(res.headers.allow).toBe("GET, PUT, HEAD");
      }
      expect((await call("DELETE", "hwi-devices/", {})).statusCode).toBe(405);
    });

    it("a missing trailing slash answers 301 to the slashed URL (spec 7.3)", async () => {
      const res = await lab.app.inject({
        method: "GET",
        url: hwi(lab.dev, "hwi-devices?page=1"),
      });
      expect(res.statusCode).toBe(301);
      expect(res.headers.location).toBe(`${hwi(lab.dev, "hwi-devices/")}?page=1`);
    });
  });

  it("the first checks of spec 7.3 hold on every new path: 401, 403, 301", async () => {
    const device = await activate(lab, { device: { name: BPM, hardware_uuid: GW } });
    const paths = [
      "hwi-devices/",
      `hwi-devices/${device.id}/`,
      `hwi-devices/${device.id}/properties/`,
      `hwi-devices/${device.id}/measurements/`,
      "hwi-device-types/",
      "hwi-gateways/",
      `gateway-info/${GW}/`,
      `unlink-gateway/${GW}/`,
      "hwi-hardware-uuid-logs/",
      "hwi-replacements/",
      "patients/P-1/measurements/",
      "webhooks/",
    ];
    for (const path of paths) {
      const url = hwi(lab.dev, path);
      expect((await lab.app.inject({ method: "GET", url })).statusCode, path).toBe(401);
      const foreign = await lab.app.inject({
        method: "GET",
        url,
        headers: { authorization: `Api-Key ${lab.other.key}` },
      });
      expect(foreign.statusCode, path).toBe(403);
      const unslashed = await lab.app.inject({ method: "GET", url: url.slice(0, -1) });
      expect(unslashed.statusCode, path).toBe(301);
    }
    // Nothing was unlinked by the unauthenticated GETs.
    expect((await call("GET", `hwi-devices/${device.id}/`)).json().hardware_uuid).toBe(GW);
  });

  it("times are the lab clock's", async () => {
    lab.advance(60_000);
    const body = await activate(lab, { device: { name: BPM, hardware_uuid: GW } });
    expect(body.device).toMatchObject({ created: "2024-10-16T04:11:00.000000Z" });
    expect(lab.clock.now()).toBe(T0 + 61_000);
  });
});
