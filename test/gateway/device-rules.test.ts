import { describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { DeviceRules } from "../../src/gateway/device-rules.ts";
import type { WhitelistDown } from "../../src/mqtt/envelope.ts";

const catalogue = Catalogue.load();

const down = (
  devices: { mac: string; code: string; sensorId?: string; status?: "RE" | "CO" }[],
): WhitelistDown => ({
  v: 1,
  type: "whitelist",
  devices: devices.map((d) => ({
    mac_address: d.mac,
    sensor_code: d.code,
    ...(d.sensorId === undefined ? {} : { sensor_id: d.sensorId }),
    whitelist_status: d.status ?? "RE",
  })),
});

describe("the gateway's whitelist and the device rules of spec 2.8", () => {
  it("holds one device per sensor code: the first entry keeps the slot", () => {
    const rules = new DeviceRules(catalogue);
    const change = rules.apply(
      down([
        { mac: "C00000000001", code: "10" },
        { mac: "C00000000002", code: "10" },
        { mac: "C00000000003", code: "34" },
      ]),
    );
    expect(rules.list().map((d) => d.mac)).toEqual(["C00000000001", "C00000000003"]);
    expect(change.refused).toEqual([
      {
        mac: "C00000000002",
        sensorCode: "10",
        reason: "the slot of sensor code 10 is held by C00000000001 (spec 2.8)",
      },
    ]);
    expect(rules.counts.refused).toBe(1);
    // A BPM advertising another code is not the whitelisted device.
    expect(rules.admits("c0:00:00:00:00:01", "10")?.mac).toBe("C00000000001");
    expect(rules.admits("c0:00:00:00:00:01", "34")).toBeUndefined();
    expect(rules.admits("c0:00:00:00:00:02", "10")).toBeUndefined();
  });

  it("holds an address listed twice once, under its first entry; the other slot stays free", () => {
    const rules = new DeviceRules(catalogue);
    const change = rules.apply(
      down([
        { mac: "C00000000001", code: "10" },
        { mac: "C00000000001", code: "34" },
        { mac: "C00000000002", code: "34" },
      ]),
    );
    expect(rules.list()).toEqual([
      { mac: "C00000000001", sensorCode: "10", sensorId: null },
      { mac: "C00000000002", sensorCode: "34", sensorId: null },
    ]);
    expect(change.refused).toEqual([
      {
        mac: "C00000000001",
        sensorCode: "34",
        reason: "C00000000001 is listed already, under sensor code 10",
      },
    ]);
  });

  it("lets inhalers share the code by sensor id, and refuses one without", () => {
    const rules = new DeviceRules(catalogue);
    const change = rules.apply(
      down([
        { mac: "C00000000001", code: "25", sensorId: "INH001" },
        { mac: "C00000000002", code: "25", sensorId: "INH002" },
        { mac: "C00000000003", code: "25", sensorId: "INH002" },
        { mac: "C00000000004", code: "25" },
        { mac: "C00000000005", code: "99" },
      ]),
    );
    expect(rules.report()).toEqual([
      { mac_address: "C00000000001", sensor_code: "25", sensor_id: "INH001" },
      { mac_address: "C00000000002", sensor_code: "25", sensor_id: "INH002" },
    ]);
    expect(change.refused.map((r) => [r.mac, r.reason])).toEqual([
      ["C00000000003", "the slot of sensor code 25/INH002 is held by C00000000002 (spec 2.8)"],
      [
        "C00000000004",
        "Vendor Inhaler Sensor devices share a gateway by sensor id, and this entry has none",
      ],
      ["C00000000005", "sensor code 99 is no gateway-connected device type"],
    ]);
  });

  it("takes a medication cap beside devices of other codes, one per code", () => {
    const rules = new DeviceRules(catalogue);
    rules.apply(
      down([
        { mac: "C00000000001", code: "27" },
        { mac: "C00000000002", code: "27" },
        { mac: "C00000000003", code: "12" },
      ]),
    );
    expect(rules.list().map((d) => [d.mac, d.sensorCode])).toEqual([
      ["C00000000001", "27"],
      ["C00000000003", "12"],
    ]);
  });

  it("says what was added and removed by each whole list", () => {
    const rules = new DeviceRules(catalogue);
    rules.apply(down([{ mac: "C00000000001", code: "10" }]));
    const next = rules.apply(
      down([
        { mac: "C00000000001", code: "10", status: "CO" },
        { mac: "C00000000002", code: "12" },
      ]),
    );
    expect(next.added.map((d) => d.mac)).toEqual(["C00000000002"]);
    expect(next.removed).toEqual([]);
    const last = rules.apply(down([{ mac: "C00000000002", code: "12" }]));
    expect(last.removed.map((d) => d.mac)).toEqual(["C00000000001"]);
    expect(last.added).toEqual([]);
    expect(rules.get("C00000000001")).toBeUndefined();
  });
});
