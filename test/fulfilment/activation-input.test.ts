import { describe, expect, it } from "vitest";
import { RpmlabError } from "../../src/core/errors.ts";
import type { FieldErrors } from "../../src/core/field-errors.ts";
import { parseActivation } from "../../src/fulfilment/activation-input.ts";
import { catalogue, GW, IMEI } from "./env.ts";

/** The body's field errors, DRF style (fails unless parseActivation refuses it). */
function errorsOf(body: unknown): FieldErrors {
  try {
    parseActivation(catalogue, body);
  } catch (error) {
    expect(error).toBeInstanceOf(RpmlabError);
    expect((error as RpmlabError).code).toBe("E_API_VALIDATION");
    return (error as RpmlabError).details.fields as FieldErrors;
  }
  throw new Error("expected a validation error");
}

describe("POST hwi-devices body (spec 2.4, 2.8)", () => {
  it("reads a valid body, mapping the legacy name and canonicalising the gateway id", () => {
    const input = parseActivation(catalogue, {
      device: { name: "Vendor BPM - L", hardware_uuid: "29-70-56-12-0b-d7" },
      patient: { external_id: " P-1 ", name: "ignored" },
      require_signature: "yes",
      delivery_type: "Priority",
      colour: "ignored",
    });
    expect(input).toMatchObject({
      hardwareUuid: GW,
      sensorId: null,
      patientExternalId: "P-1",
      requireSignature: true,
      shipGatewayOnly: false,
      deliveryType: "Priority",
    });
    expect(input.profile.name).toBe("Vendor BPM - Wide Range");
  });

  it("keys an unknown device name under device.name and lists the valid names", () => {
    const fields = errorsOf({ device: { name: "Vendor BPM - M" } });
    const [message] = (fields.device as { name: string[] }).name;
    expect(message).toMatch(/^"Vendor BPM - M" is not a valid device name\. Valid names: /);
    for (const p of catalogue.profiles) expect(message).toContain(p.name);
    expect(message).toContain("Vendor BPM - L → Vendor BPM - Wide Range");
  });

  it("requires device and device.name, and refuses a body that is no object", () => {
    expect(errorsOf({})).toEqual({ device: ["This field is required."] });
    expect(errorsOf({ device: {} })).toEqual({ device: { name: ["This field is required."] } });
    expect(errorsOf({ device: "Vendor Scale" })).toEqual({
      device: { non_field_errors: ["Invalid data. Expected a dictionary, but got str."] },
    });
    expect(errorsOf([])).toEqual({
      non_field_errors: ["Invalid data. Expected a dictionary, but got list."],
    });
  });

  it("requires an inhaler's sensor id and checks it against the profile's pattern", () => {
    const inhaler = { device: { name: "Vendor Inhaler Sensor", hardware_uuid: GW } };
    expect(errorsOf(inhaler)).toEqual({
      sensor_id: [
        "This field is required for Vendor Inhaler Sensor (the serial number of the sensor).",
      ],
    });
    expect(errorsOf({ ...inhaler, sensor_id: "AB12" }).sensor_id).toEqual([
      '"AB12" is not a valid sensor id for Vendor Inhaler Sensor (the serial number of the sensor): it must match ^[A-Za-z0-9]{6,8}$.',
    ]);
    expect(errorsOf({ ...inhaler, sensor_id: "AB-1234" })).toHaveProperty("sensor_id");
    expect(parseActivation(catalogue, { ...inhaler, sensor_id: "Ab123456" }).sensorId).toBe(
      "Ab123456",
    );
  });

  it("refuses a sensor id on types without sensor ids", () => {
    expect(errorsOf({ device: { name: "Vendor Cellular BPM" }, sensor_id: "AB1234" })).toEqual({
      sensor_id: [
        "Vendor Cellular BPM is a direct-cellular device: direct-cellular devices have no sensor ids (spec 2.8).",
      ],
    });
    expect(
      errorsOf({ device: { name: "Vendor Medication Cap" }, sensor_id: "AB1234" }).sensor_id,
    ).toEqual([
      "Vendor Medication Cap takes no sensor_id: only types with several devices per gateway told apart by sensor id (Vendor Inhaler Sensor) have one.",
    ]);
    // Null or blank is no sensor id at all.
    expect(
      parseActivation(catalogue, { device: { name: "Vendor Scale" }, sensor_id: "" }).sensorId,
    ).toBeNull();
  });

  it("takes a gateway id for gateway devices and an IMEI for cellular ones", () => {
    expect(errorsOf({ device: { name: "Vendor Scale", hardware_uuid: IMEI } }).device).toEqual({
      hardware_uuid: [
        `"${IMEI}" is not a gateway id: 12 hexadecimal characters (hyphens are ignored), e.g. 297056120BD7.`,
      ],
    });
    expect(
      errorsOf({ device: { name: "Vendor Cellular Scale", hardware_uuid: GW } }).device,
    ).toEqual({
      hardware_uuid: [
        `"${GW}" is not an IMEI: Vendor Cellular Scale is a direct-cellular device, identified by its 15-digit IMEI.`,
      ],
    });
    expect(
      parseActivation(catalogue, { device: { name: "Vendor Scale", hardware_uuid: null } })
        .hardwareUuid,
    ).toBeNull();
  });

  it("accepts only the deprecated delivery types Priority and Shipping", () => {
    expect(
      parseActivation(catalogue, { device: { name: "Vendor Scale" }, delivery_type: "Shipping" })
        .deliveryType,
    ).toBe("Shipping");
    const [message] = errorsOf({ device: { name: "Vendor Scale" }, delivery_type: "Overnight" })
      .delivery_type as string[];
    expect(message).toMatch(/^"Overnight" is not a valid choice\./);
  });

  it("refuses ship_gateway_only with hardware in hand or on a cellular device", () => {
    expect(
      errorsOf({ device: { name: "Vendor Scale", hardware_uuid: GW }, ship_gateway_only: true }),
    ).toHaveProperty("ship_gateway_only");
    expect(
      errorsOf({ device: { name: "Vendor Cellular Scale" }, ship_gateway_only: true })
        .ship_gateway_only,
    ).toEqual([
      "Vendor Cellular Scale is a direct-cellular device: it has no gateway to ship (spec 2.8).",
    ]);
  });

  it("reports every problem at once, as DRF does", () => {
    expect(
      errorsOf({
        device: { name: "Vendor Inhaler Sensor", hardware_uuid: "nope" },
        patient: { name: "No Id" },
        require_signature: "perhaps",
      }),
    ).toEqual({
      device: { hardware_uuid: [expect.stringContaining('"nope" is not a gateway id')] },
      sensor_id: [expect.stringContaining("This field is required")],
      patient: { external_id: ["This field is required."] },
      require_signature: ["Must be a valid boolean."],
    });
  });
});
