/**
 * The gateway's BLE central in its own worker thread: an unmodified noble, its HCI socket
 * bridged to a VirtualController in the lab's thread (or, later, a real adapter).
 */
import { parentPort } from "node:worker_threads";
import { type Advertisement, NobleCentral } from "../ble/hosts/central.ts";
import { workerSockets } from "../ble/hosts/worker-host.ts";
import { SystemClock } from "../core/clock.ts";
import { isRpmlabError, RpmlabError } from "../core/errors.ts";
import { sensorCodeOf } from "../devices/advertising-data.ts";
import { runSession } from "./ble-session.ts";
import type { GatewayMessage, GatewayRequest } from "./gateway-protocol.ts";
import { admitted } from "./whitelist.ts";

const port = parentPort!;
const post = (m: GatewayMessage): void => port.postMessage(m);
const clock = new SystemClock();

function findAdvertiser(central: NobleCentral, req: GatewayRequest): Promise<Advertisement> {
  return new Promise((resolve, reject) => {
    let stop: (() => Promise<void>) | undefined;
    let done = false;
    const timer = clock.setTimeout(() => {
      done = true;
      void stop?.();
      reject(
        new RpmlabError(
          "E_BLE_TIMEOUT",
          `no whitelisted device advertised within ${req.scanTimeoutMs} ms`,
        ),
      );
    }, req.scanTimeoutMs);
    void central
      .startScan([], (adv) => {
        if (done || !adv.connectable) return;
        if (!admitted(req.whitelist, adv.address, sensorCodeOf(adv.manufacturerData))) return;
        done = true;
        clock.clearTimeout(timer);
        void stop?.().then(() => resolve(adv), reject);
      })
      .then((s) => {
        stop = s;
        if (done) void s();
      }, reject);
  });
}

async function visit(central: NobleCentral, req: GatewayRequest): Promise<void> {
  try {
    const adv = await findAdvertiser(central, req);
    const link = await central.connect(adv.id);
    const result = await runSession(link, {
      clock,
      sensorCode: sensorCodeOf(adv.manufacturerData),
      lastSequence: req.lastSequences[adv.address],
      lingerMs: req.lingerMs,
      ...(req.timeouts === undefined ? {} : { timeouts: req.timeouts }),
      onValue: (value) => post({ type: "value", value }),
    });
    post({ id: req.id, type: "visited", address: adv.address, rssi: adv.rssi, result });
  } catch (error) {
    post({
      id: req.id,
      type: "error",
      message: (error as Error)?.message ?? String(error),
      code: isRpmlabError(error) ? error.code : undefined,
    });
  }
}

async function main(): Promise<void> {
  const { factory } = await workerSockets();
  const central = await NobleCentral.open(factory, clock);
  let queue = Promise.resolve();
  port.on("message", (m: GatewayRequest) => {
    if (typeof m !== "object" || m === null || m.type !== "visit") return;
    queue = queue.then(() => visit(central, m));
  });
  post({ type: "ready", address: central.address });
}

main().catch((error: unknown) =>
  post({ type: "failed", message: (error as Error)?.stack ?? String(error) }),
);
