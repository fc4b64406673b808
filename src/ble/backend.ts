import type { BleSpec } from "../config/ble-spec.ts";
import type { HciTap } from "./btsnoop.ts";
import type { SocketFactory } from "./hosts/load.ts";
import type { Position } from "./medium/path-loss.ts";
import type { EmulatedRadio } from "./radio.ts";
import { DirectTransport } from "./socket/direct-transport.ts";
import { EmulatedHciSocket } from "./socket/emulated-socket.ts";
import { HciAdapter } from "./socket/hci-adapter.ts";
import { nativeSocketFactory } from "./socket/native.ts";
import { TcpTransport } from "./socket/tcp-transport.ts";

/** The HCI sockets one host stack gets, by spec string, and how to let them go. */
export interface HciBackend {
  readonly factory: SocketFactory;
  /** What a btsnoop capture can watch (undefined for hci:N: capture with btmon there). */
  readonly tap: HciTap | undefined;
  close(): void;
}

/**
 * Opens the backend a spec names: `emulated` (a new controller on `radio`), `tcp://host:port`
 * (H4 to a controller elsewhere), `hci:N` (the native socket; fails early with E_BLE_NO_ADAPTER
 * when the module or the kernel's Bluetooth is missing).
 */
export async function openHciBackend(
  spec: BleSpec,
  name: string,
  radio?: EmulatedRadio,
  position?: Position,
): Promise<HciBackend> {
  switch (spec.kind) {
    case "emulated": {
      if (radio === undefined) throw new Error("openHciBackend: emulated needs a radio");
      const controller = radio.controller(name, position);
      const adapter = new HciAdapter(0, new DirectTransport(controller), name);
      return {
        factory: () => new EmulatedHciSocket(adapter),
        tap: controller,
        // The controller leaves the shared medium with its host (a gateway replaced in a run).
        close: () => {
          adapter.close();
          controller.close();
        },
      };
    }
    case "tcp": {
      const adapter = new HciAdapter(0, await TcpTransport.open(spec.host, spec.port), name);
      return {
        factory: () => new EmulatedHciSocket(adapter),
        tap: adapter,
        close: () => adapter.close(),
      };
    }
    case "hci": {
      const factory = nativeSocketFactory(spec.devId);
      factory(); // constructs (not binds) one socket: a missing kernel Bluetooth fails here, clearly
      return { factory, tap: undefined, close: () => undefined };
    }
  }
}
