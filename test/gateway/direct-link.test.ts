/**
 * A direct link's errors read as the BLE path's (the gateway's client over noble) read them, and
 * what a session makes of them.
 */
import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { runSession } from "../../src/gateway/ble-session.ts";
import { DirectLink } from "../../src/gateway/direct-link.ts";
import { currentTimeAt, encodeCurrentTime } from "../../src/gatt/characteristics/current-time.ts";

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
