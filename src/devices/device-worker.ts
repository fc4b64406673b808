/**
 * A virtual device in its own worker thread: one bleno per thread (bleno is a singleton per
 * module instance), its HCI socket bridged to a VirtualController in the lab's thread.
 */
import { parentPort } from "node:worker_threads";
import { BlenoPeripheral } from "../ble/hosts/peripheral.ts";
import { workerSockets } from "../ble/hosts/worker-host.ts";
import { Catalogue } from "../catalogue/catalogue.ts";
import { SystemClock } from "../core/clock.ts";
import { tsWorkerData } from "../core/ts-worker.ts";
import { advertisingData, scanResponseData } from "./advertising-data.ts";
import { BleDevice } from "./ble-device.ts";
import type { DeviceMessage, DeviceRequest, DeviceWorkerData } from "./device-protocol.ts";

const port = parentPort!;
const post = (m: DeviceMessage): void => port.postMessage(m);

async function main(): Promise<void> {
  const data = tsWorkerData<DeviceWorkerData>();
  const profile = Catalogue.load().get(data.profile);
  const clock = new SystemClock();
  const device = new BleDevice({
    profile,
    clock,
    serial: data.serial,
    ...(data.clockOffsetMs === undefined ? {} : { clockOffsetMs: data.clockOffsetMs }),
    ...(data.driftPpm === undefined ? {} : { driftPpm: data.driftPpm }),
  });
  device.onListening = () => post({ type: "listening" });
  const { factory } = await workerSockets();
  const peripheral = await BlenoPeripheral.open(factory, clock);
  let connected = false;
  peripheral.on("accept", (address) => {
    connected = true;
    post({ type: "connected", address });
  });
  peripheral.on("disconnect", (address) => {
    connected = false;
    device.disconnected();
    post({ type: "disconnected", address });
  });
  await peripheral.serve(device.services());
  await peripheral.advertiseData(
    advertisingData(profile),
    scanResponseData(device.localName, profile.sensor_code),
  );
  port.on("message", (m: DeviceRequest) => {
    if (typeof m !== "object" || m === null || !("id" in m)) return;
    if (m.type === "measure") {
      void device
        .measure(m.reading)
        .then((outcome) => post({ id: m.id, type: "measured", outcome }));
    } else if (m.type === "status") {
      post({
        id: m.id,
        type: "status",
        status: {
          address: peripheral.address,
          counts: { ...device.counts },
          stored: device.store.size,
          clockError: device.clock.error(),
          connected,
        },
      });
    }
  });
  post({ type: "ready", address: peripheral.address });
}

main().catch((error: unknown) =>
  post({ type: "failed", message: (error as Error)?.stack ?? String(error) }),
);
