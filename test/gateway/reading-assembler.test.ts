import { describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { type AssembledReading, ReadingAssembler } from "../../src/gateway/reading-assembler.ts";
import { mappingFor } from "../../src/gatt/mapping.ts";
import { SIG } from "../../src/gatt/uuids.ts";
import { MAX_VALUES } from "../../src/mqtt/envelope.ts";
import { encodePayload } from "../../src/mqtt/payload.ts";
import { gatewayUplink } from "../../src/mqtt/uplink.ts";

const catalogue = Catalogue.load();
const T0 = Date.UTC(2026, 4, 1, 9, 0, 0);
const CUFF = "c0:00:00:00:00:01";
/** Intermediate Cuff Pressure (BLS 1.1 §3.2): notified while a real cuff inflates and deflates. */
const INTERMEDIATE_CUFF_PRESSURE = "2A36";

/** An assembler for one cuff, with what it relays; `value` adds a notification at T0 + i s. */
function cuffAssembler() {
  const readings: AssembledReading[] = [];
  const assembler = new ReadingAssembler(
    catalogue,
    (r) => readings.push(r),
    () => ({ sensorCode: "10", sensorId: null }),
  );
  const value = (uuid: string, bytes: number[], i: number) =>
    assembler.add({
      deviceAddress: CUFF,
      sensorCode: "10",
      uuid,
      value: Uint8Array.from(bytes),
      receivedAt: T0 + i * 1000,
      sequence: undefined,
      stored: false,
      clockUnset: false,
    });
  return { readings, assembler, value };
}

describe("ReadingAssembler", () => {
  it("never relays a reading of more values than an envelope takes: a real cuff's many intermediate pressures do not make the batch off its schema", () => {
    const { readings, assembler, value } = cuffAssembler();
    // 40 s of deflation, one notification a second, then the measurement and the battery level.
    for (let i = 0; i < 40; i++) value(INTERMEDIATE_CUFF_PRESSURE, [0, 160 - i, 0, 0, 0, 0, 0], i);
    const measurement = [0x1e, 0x7a, 0x00, 0x50, 0x00, 0x60, 0x00];
    value(SIG.characteristics.bloodPressureMeasurement, measurement, 40);
    value(SIG.characteristics.batteryLevel, [90], 41);
    assembler.end(CUFF);

    for (const r of readings) expect(r.values.length).toBeLessThanOrEqual(MAX_VALUES);
    expect(readings.flatMap((r) => r.values)).toHaveLength(42);
    expect(readings.at(-1)?.values.map((v) => v.uuid)).toEqual([
      SIG.characteristics.bloodPressureMeasurement,
      SIG.characteristics.batteryLevel,
    ]);
    // The batch the gateway would publish passes the topic's schema, so its good reading is
    // not lost with the others to one dead letter.
    expect(() =>
      encodePayload(
        "gw/up",
        gatewayUplink({
          messageId: "m-1",
          gatewayUuid: "A0A0A0A0A0A0",
          sentAt: T0 + 60_000,
          readings: readings.map((r) => ({ ...r, deviceAddress: "C00000000001" })),
        }),
      ),
    ).not.toThrow();
  });

  it("starts a new reading at a second value of a characteristic: a real cuff's battery notified while it lingers does not make its measurement undecodable", async () => {
    const { readings, assembler, value } = cuffAssembler();
    // A SIG cuff sends no vendor Reading Context to close its reading.
    // Flags: time stamp present; 122/80 mmHg, MAP 96; 2026-05-01 09:00:00 (BLS 1.1 §3.1).
    const measurement = [0x02, 0x7a, 0, 0x50, 0, 0x60, 0, 0xea, 0x07, 5, 1, 9, 0, 0];
    value(SIG.characteristics.bloodPressureMeasurement, measurement, 0);
    value(SIG.characteristics.batteryLevel, [90], 1);
    value(SIG.characteristics.batteryLevel, [89], 30);
    assembler.end(CUFF);
    expect(readings.map((r) => r.values.map((v) => v.uuid))).toEqual([
      [SIG.characteristics.bloodPressureMeasurement, SIG.characteristics.batteryLevel],
      [SIG.characteristics.batteryLevel],
    ]);
    const profile = catalogue.get("Vendor BPM - Wide Range");
    expect(() => mappingFor(profile).decode(readings[0]!.values, profile)).not.toThrow();
  });
});
