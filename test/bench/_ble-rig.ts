/** Shared by the BLE benchmarks: in-process noble/bleno hosts on one emulated radio. */
import { loadavg } from "node:os";
import { emulatedBackend } from "../../src/ble/backend.ts";
import { NobleCentral } from "../../src/ble/hosts/central.ts";
import { BlenoPeripheral } from "../../src/ble/hosts/peripheral.ts";
import { EmulatedRadio } from "../../src/ble/radio.ts";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import type { Profile } from "../../src/catalogue/schema.ts";
import { SystemClock } from "../../src/core/clock.ts";
import { Rng } from "../../src/core/rng.ts";
import { advertisingData, scanResponseData } from "../../src/devices/advertising-data.ts";
import { BleDevice } from "../../src/devices/ble-device.ts";

export const catalogue = Catalogue.load();
export const clock = new SystemClock();
export const radio = new EmulatedRadio(clock, new Rng("bench"));

function sockets(name: string) {
  return emulatedBackend(radio, name, { position: { x: 1, y: 1 } }).factory;
}

export async function startDevice(profile: Profile, serial: string) {
  const device = new BleDevice({ profile, clock, serial });
  const peripheral = await BlenoPeripheral.open(sockets(serial), clock);
  peripheral.on("disconnect", () => device.disconnected());
  await peripheral.serve(device.services());
  await peripheral.advertiseData(
    advertisingData(profile),
    scanResponseData(device.localName, profile.sensor_code),
  );
  return { device, peripheral };
}

export async function startCentral(name: string) {
  return await NobleCentral.open(sockets(name), clock);
}

export function load(): string {
  return `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(", ")} on 2 cores`;
}
