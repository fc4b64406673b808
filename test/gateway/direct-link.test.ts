/**
 * A direct link's errors read as the BLE path's (the gateway's client over noble) read them, and
 * what a session makes of them.
 */
import { describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { runSession } from "../../src/gateway/ble-session.ts";
import { DirectLink } from "../../src/gateway/direct-link.ts";
import { type AssembledReading, ReadingAssembler } from "../../src/gateway/reading-assembler.ts";
import { currentTimeAt, encodeCurrentTime } from "../../src/gatt/characteristics/current-time.ts";
import { mappingFor } from "../../src/gatt/mapping.ts";
import { SIG } from "../../src/gatt/uuids.ts";

const catalogue = Catalogue.load();
/** Intermediate Cuff Pressure (BLS 1.1 §3.2): notified while a real cuff inflates and deflates. */
const INTERMEDIATE_CUFF_PRESSURE = "2A36";

const time = (write: number, read: () => Uint8Array) =>
  new DirectLink(
    "c0:00:00:00:00:07",
    [
      {
        uuid: "1805",
        characteristics: [
          { uuid: "2A2B", properties: ["read", "write"], write: () => write, read },
        ],
      },
    ],
    () => undefined,
  );

describe("a direct link's ATT errors", () => {
  it("names the ATT error of a refused write, as the BLE path does", async () => {
    const link = time(0x0d, () => new Uint8Array(10));
    await link.discover();
    const refused = link.write("2A2B", new Uint8Array(3));
    await expect(refused).rejects.toMatchObject({ code: "E_BLE_GATT" });
    await expect(refused).rejects.toThrow(
      /c0:00:00:00:00:07: write 2A2B: ATT error 0x0d \(Invalid Attribute Value Length\)$/,
    );
  });

  it("fails a read whose value cannot be encoded with Unlikely Error, as bleno answers it", async () => {
    const link = time(0, () => {
      throw new RangeError("year 10000 is past a Date Time");
    });
    await link.discover();
    const refused = link.read("2A2B");
    await expect(refused).rejects.toMatchObject({ code: "E_BLE_GATT" });
    await expect(refused).rejects.toThrow(/read 2A2B: ATT error 0x0e \(Unlikely Error\)$/);
  });
});

describe("a gateway session with a device that will not have its clock set", () => {
  it("collects the readings with timeSet false when Current Time is read-only or refuses the write", async () => {
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 5, 8) });
    const now = encodeCurrentTime(currentTimeAt(clock.now()));
    for (const write of [undefined, () => 0x80]) {
      // CTS 1.1: Current Time may be read-only; a server that ignores the time answers 0x80
      // (Data field ignored). The session failed on the refusal, and fetched nothing.
      const link = new DirectLink(
        "c0:00:00:00:00:08",
        [
          {
            uuid: "1805",
            characteristics: [
              write === undefined
                ? { uuid: "2A2B", properties: ["read"], read: () => now }
                : { uuid: "2A2B", properties: ["read", "write"], read: () => now, write },
            ],
          },
          {
            uuid: "180F",
            characteristics: [
              {
                uuid: "2A19",
                properties: ["read", "notify"],
                read: () => new Uint8Array([90]),
                subscribe: (send) => void send(new Uint8Array([90])),
              },
            ],
          },
        ],
        () => undefined,
      );
      const values: string[] = [];
      const result = await runSession(link, {
        clock,
        sensorCode: undefined,
        lastSequence: undefined,
        onValue: (v) => values.push(v.uuid),
      });
      expect(result).toMatchObject({ timeSet: false, clockUnset: false, live: 1 });
      expect(values).toEqual(["2A19"]);
    }
  });
});

describe("a gateway session with a device whose Current Time notifies (CTS 1.1 §3.1)", () => {
  it("sets the clock but does not subscribe to Current Time: its notifications are no readings to relay", async () => {
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 5, 8) });
    const now = encodeCurrentTime(currentTimeAt(clock.now()));
    const subscribed: string[] = [];
    const notifying = (uuid: string, value: Uint8Array) => ({
      uuid,
      properties: ["read", "write", "notify"] as const,
      read: () => value,
      write: () => 0,
      subscribe: (send: (v: Uint8Array) => Promise<void>) => {
        subscribed.push(uuid);
        void send(value);
      },
    });
    const link = new DirectLink(
      "c0:00:00:00:00:09",
      [
        { uuid: "1805", characteristics: [notifying("2A2B", now)] },
        { uuid: "180F", characteristics: [notifying("2A19", new Uint8Array([80]))] },
      ],
      () => undefined,
    );
    const values: string[] = [];
    const result = await runSession(link, {
      clock,
      sensorCode: undefined,
      lastSequence: undefined,
      onValue: (v) => values.push(v.uuid),
    });
    expect(result).toMatchObject({ timeSet: true, live: 1 });
    expect(subscribed).toEqual(["2A19"]);
    expect(values).toEqual(["2A19"]);
  });
});

describe("a gateway session with an unset device clock it cannot set", () => {
  it("marks every value of the visit clock_unset, live ones too: the device stamps them with its wrong clock", async () => {
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 5, 8) });
    // A fresh battery: the clock reads 2000-01-01, and Current Time is read-only (CTS 1.1).
    const shown = encodeCurrentTime(currentTimeAt(Date.UTC(2000, 0, 1)));
    for (const storesOffline of [true, false]) {
      let notify: ((v: Uint8Array) => Promise<void>) | undefined;
      const link = new DirectLink(
        "c0:00:00:00:00:0a",
        [
          {
            uuid: "1805",
            characteristics: [{ uuid: "2A2B", properties: ["read"], read: () => shown }],
          },
          {
            uuid: "180F",
            characteristics: [
              {
                uuid: "2A19",
                properties: ["read", "notify"],
                read: () => new Uint8Array([90]),
                subscribe: (send) => {
                  notify = send;
                  void send(new Uint8Array([90]));
                },
              },
            ],
          },
        ],
        () => undefined,
      );
      const marks: boolean[] = [];
      const session = runSession(link, {
        clock,
        sensorCode: undefined,
        storesOffline,
        lastSequence: undefined,
        lingerMs: 2000,
        onValue: (v) => marks.push(v.clockUnset),
      });
      // A reading taken while the gateway lingers: still on the device's 2000 clock.
      await clock.run({ until: clock.now() + 1000 });
      await notify!(new Uint8Array([89]));
      await clock.run({ until: clock.now() + 2000 });
      const result = await session;
      expect(result).toMatchObject({ timeSet: false, clockUnset: true, live: 2 });
      // Unmarked, the service stored them at the device's time, in the year 2000.
      expect({ storesOffline, marks }).toEqual({ storesOffline, marks: [true, true] });
    }
  });
});

describe("a gateway session with a real cuff that notifies Intermediate Cuff Pressure (BLS 1.1 §3.2)", () => {
  it("does not subscribe to it: every reading it relays decodes, so the service keeps no dead letter per measurement", async () => {
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 4, 1, 9) });
    const subscribed: string[] = [];
    // Flags: time stamp; 122/80 mmHg, MAP 96; 2026-05-01 09:00:00 (BLS 1.1 §3.1).
    const measurement = Uint8Array.from([
      0x02, 0x7a, 0, 0x50, 0, 0x60, 0, 0xea, 0x07, 5, 1, 9, 0, 0,
    ]);
    const pushing = (uuid: string, values: Uint8Array[]) => ({
      uuid,
      properties: ["notify"] as const,
      subscribe: (send: (v: Uint8Array) => Promise<void>) => {
        subscribed.push(uuid);
        for (const v of values) void send(v);
      },
    });
    const pressures = Array.from({ length: 5 }, (_, i) =>
      Uint8Array.from([0, 160 - i, 0, 0xff, 0x07, 0xff, 0x07]),
    );
    const link = new DirectLink(
      "c0:00:00:00:00:0b",
      [
        {
          uuid: SIG.services.bloodPressure,
          characteristics: [
            pushing(INTERMEDIATE_CUFF_PRESSURE, pressures),
            pushing(SIG.characteristics.bloodPressureMeasurement, [measurement]),
          ],
        },
      ],
      () => undefined,
    );
    const readings: AssembledReading[] = [];
    const assembler = new ReadingAssembler(
      catalogue,
      (r) => readings.push(r),
      () => ({ sensorCode: "10", sensorId: null }),
    );
    await runSession(link, {
      clock,
      sensorCode: "10",
      lastSequence: undefined,
      onValue: (v) => assembler.add(v),
    });
    assembler.end(link.address);
    expect(subscribed).not.toContain(INTERMEDIATE_CUFF_PRESSURE);
    const profile = catalogue.get("Vendor BPM - Wide Range");
    // What ingestion does with each relayed reading: one that does not decode is a dead letter.
    expect(readings.map((r) => mappingFor(profile).decode(r.values, profile).records)).toEqual([
      [expect.objectContaining({ metric: "blood_pressure", value_1: 122, value_2: 80 })],
    ]);
  });
});
