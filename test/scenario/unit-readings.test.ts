/**
 * What a gateway's outbox tells the scenario ledger (src/scenario/run/unit-readings.ts): the
 * readings it dropped when full, read back from the values it relayed, by the device that sent
 * them.
 */
import { describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { toStoredReading } from "../../src/cellular/stored-reading.ts";
import { deviceMacAddress } from "../../src/fulfilment/identifiers.ts";
import { mappingFor } from "../../src/gatt/mapping.ts";
import type { DeviceRig } from "../../src/scenario/run/fleet-rigs.ts";
import { DeviceLedger } from "../../src/scenario/run/ledger.ts";
import { gatewayDropped } from "../../src/scenario/run/unit-readings.ts";
import { readingsFor } from "../ble/support/lab.ts";

const catalogue = Catalogue.load();

const rig = (name: string, hwiDeviceId: string, count: number) => {
  const profile = catalogue.get(name);
  const readings = readingsFor(profile, hwiDeviceId, count).map((r) => ({
    ...r,
    device: profile.name,
    duplicate: false,
    // Stamped by the device clock to the second, as BleDevice stamps them.
    timestamp: Math.floor(r.timestamp / 1000) * 1000,
  }));
  const ledger = new DeviceLedger(readings);
  for (const r of readings) ledger.taken(r, r.timestamp, Promise.resolve(true));
  const device = { profile, hwiDeviceId, ledger } as unknown as DeviceRig;
  const relayed = (index: number, seq: number) => ({
    seq,
    queuedAt: 0,
    item: {
      ...toStoredReading({
        deviceAddress: deviceMacAddress(hwiDeviceId),
        receivedAt: readings[index]!.timestamp,
        sequence: index + 1,
        values: mappingFor(profile).encode(readings[index]!, profile, index + 1),
      }),
    },
  });
  return { device, ledger, relayed };
};

describe("gatewayDropped", () => {
  it("counts each entry a full gateway outbox dropped as dropped_full on the device that sent it", async () => {
    const cuff = rig("Vendor BPM - Wide Range", "0b9d3c1e-5f4a-4c2b-9e8d-7a6b5c4d3e2f", 3);
    const scale = rig("Vendor Scale", "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f", 2);
    gatewayDropped(
      [cuff.relayed(0, 1), scale.relayed(0, 2), cuff.relayed(1, 3)],
      [cuff.device, scale.device],
    );
    expect(await cuff.ledger.count([])).toMatchObject({ taken: 3, droppedFull: 2, missing: 1 });
    expect(await scale.ledger.count([])).toMatchObject({ taken: 2, droppedFull: 1, missing: 1 });
  });
});
