import { describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { TypedEvents } from "../../src/core/events.ts";
import { FieldErrorCollector } from "../../src/core/field-errors.ts";
import { deviceFilterOf } from "../../src/fulfilment/device-view.ts";
import type { FulfilmentEventSink, FulfilmentEvents } from "../../src/fulfilment/events.ts";
import { gatewayFilterOf } from "../../src/fulfilment/gateways.ts";

describe("list query parsing", () => {
  it("maps the hwi-devices filters onto the store's DeviceFilter", () => {
    expect(
      deviceFilterOf({
        properties__key: "measurement_webhook_id",
        properties__value: "abc",
        status: "SHIPPED",
        patient__external_id: "P-1",
        device__hardware_uuid: "297056120BD7",
        device__hardware_uuid__iexact: "297056120bd7",
        search: "scale",
        page: "2",
      }),
    ).toEqual({
      propertyKey: "measurement_webhook_id",
      propertyValue: "abc",
      status: ["Dropshipped", "In Transit", "Out for Delivery"],
      patientExternalId: "P-1",
      hardwareUuid: "297056120BD7",
      hardwareUuidIexact: "297056120bd7",
      search: "scale",
    });
    expect(deviceFilterOf({ status: "Delivered", search: "" })).toEqual({ status: "Delivered" });
  });

  it("maps the hwi-gateways query onto GatewayFilter", () => {
    expect(
      gatewayFilterOf({
        ordering: "-last_measurement",
        last_measurement__isnull: "TRUE",
        shipped_on__isnull: "0",
      }),
    ).toEqual({
      ordering: "-last_measurement",
      lastMeasurementIsNull: true,
      shippedOnIsNull: false,
    });
    expect(gatewayFilterOf({ ordering: ["assigned_on", "shipped_on"] })).toEqual({
      ordering: "shipped_on",
    });
    expect(() => gatewayFilterOf({ ordering: "assigned_on,shipped_on" })).toThrow(
      /not a valid ordering/,
    );
  });
});

describe("validation errors", () => {
  it("nest by field path and keep every message", () => {
    const errors = new FieldErrorCollector();
    errors.add(["device", "name"], "one");
    errors.add(["device", "name"], "two");
    errors.add("sensor_id", "three");
    expect(errors.fields()).toEqual({ device: { name: ["one", "two"] }, sensor_id: ["three"] });
    expect(errors.has(["device", "name"])).toBe(true);
    expect(errors.has(["device", "hardware_uuid"])).toBe(false);
    expect(() => errors.throwIfAny()).toThrow(/invalid device, sensor_id: one/);
  });
});

describe("event sink", () => {
  it("takes a TypedEvents whose map holds more than the fulfilment events", () => {
    type LabEvents = FulfilmentEvents & { "measurement.stored": { id: number } };
    const lab = new TypedEvents<LabEvents>();
    const seen: string[] = [];
    lab.on("replacement.status", (e) => seen.push(e.status));
    const sink: FulfilmentEventSink = lab;
    sink.emit("replacement.status", {
      accountId: "a",
      replacement: {} as never,
      status: "Dropshipped",
      at: 0,
    });
    expect(seen).toEqual(["Dropshipped"]);
    expect(Catalogue).toBeDefined();
  });
});
