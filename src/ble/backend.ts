import type { BleSpec } from "../config/ble-spec.ts";
import type { Clock } from "../core/clock.ts";
import { RpmlabError } from "../core/errors.ts";
import type { HciTap } from "./btsnoop.ts";
import type { VirtualController } from "./controller/virtual-controller.ts";
import type { BdAddr } from "./hci/address.ts";
import type { SocketFactory } from "./hosts/load.ts";
import type { Position } from "./medium/path-loss.ts";
import type { EmulatedRadio } from "./radio.ts";
import { DirectTransport } from "./socket/direct-transport.ts";
import { EmulatedHciSocket } from "./socket/emulated-socket.ts";
import { HciAdapter } from "./socket/hci-adapter.ts";
import { nativeSocketFactory } from "./socket/native.ts";
import { TcpTransport } from "./socket/tcp-transport.ts";
import { writeBdAddr } from "./socket/write-bd-addr.ts";

/** The HCI sockets one host stack gets, by spec string, and how to let them go. */
export interface HciBackend {
  readonly factory: SocketFactory;
  /** What a btsnoop capture can watch (undefined for hci:N: capture with btmon there). */
  readonly tap: HciTap | undefined;
  /** tcp://: resolves with the error when the controller goes away (a host cannot tell). */
  readonly lost?: Promise<Error>;
  close(): void;
}

/** An emulated backend, with the controller it put on the medium (moved, or interfered with). */
export interface EmulatedBackend extends HciBackend {
  readonly controller: VirtualController;
}

/**
 * A new controller on `radio` (at `position`, with `address` or one drawn from its name) and
 * the sockets of a host in this thread; closing leaves the medium with the host (a gateway
 * replaced in a run, a device powered off).
 */
export function emulatedBackend(
  radio: EmulatedRadio,
  name: string,
  place: { readonly position?: Position | undefined; readonly address?: BdAddr } = {},
): EmulatedBackend {
  const controller = radio.controller(name, place.position, place.address);
  const adapter = new HciAdapter(0, new DirectTransport(controller), name);
  return {
    controller,
    factory: () => new EmulatedHciSocket(adapter),
    tap: controller,
    close: () => {
      adapter.close();
      controller.close();
    },
  };
}

/** Where a host's controller sits and what it is called on the air. */
export interface BackendPlace {
  /** The medium of `emulated`. */
  readonly radio?: EmulatedRadio | undefined;
  readonly position?: Position | undefined;
  /**
   * The controller's public address (`rpmlab device --address`): given to an emulated one, and
   * written to a tcp:// one (write-bd-addr.ts, bounded by `clock`); a real adapter's is its own.
   */
  readonly address?: { readonly value: BdAddr; readonly clock: Clock } | undefined;
}

/**
 * Opens the backend a spec names: `emulated` (a new controller on `radio`), `tcp://host:port`
 * (H4 to a controller elsewhere), `hci:N` (the native socket; fails early with E_BLE_NO_ADAPTER
 * when the module or the kernel's Bluetooth is missing).
 */
export async function openHciBackend(
  spec: BleSpec,
  name: string,
  place: BackendPlace = {},
): Promise<HciBackend> {
  const { radio, position, address } = place;
  switch (spec.kind) {
    case "emulated": {
      if (radio === undefined) throw new Error("openHciBackend: emulated needs a radio");
      return emulatedBackend(radio, name, {
        position,
        ...(address === undefined ? {} : { address: address.value }),
      });
    }
    case "tcp": {
      const transport = await TcpTransport.open(spec.host, spec.port);
      if (address !== undefined) {
        await writeBdAddr(transport, address.value, address.clock).catch((error: unknown) => {
          transport.close();
          throw error;
        });
      }
      const adapter = new HciAdapter(0, transport, name);
      return {
        factory: () => new EmulatedHciSocket(adapter),
        tap: adapter,
        lost: transport.lost,
        close: () => adapter.close(),
      };
    }
    case "hci": {
      if (address !== undefined) {
        throw new RpmlabError(
          "E_CONFIG_INVALID",
          `--address ${address.value}: a real adapter (hci:${spec.devId}) keeps its own address; set it with its vendor's tool (btmgmt public-addr, bdaddr), or use emulated or tcp://`,
          { field: "address" },
        );
      }
      const factory = nativeSocketFactory(spec.devId);
      factory(); // constructs (not binds) one socket: a missing kernel Bluetooth fails here, clearly
      return { factory, tap: undefined, close: () => undefined };
    }
  }
}
