import { createServer, type Server, type Socket } from "node:net";
import { isAddressInUse, RpmlabError } from "../core/errors.ts";
import type { VirtualController } from "./controller/virtual-controller.ts";
import { H4 } from "./hci/constants.ts";
import * as ev from "./hci/events.ts";
import { H4Framer } from "./hci/h4-framer.ts";
import type { EmulatedRadio } from "./radio.ts";

/** Hardware_Code of the Hardware Error event sent when the host's H4 stream loses sync. */
const HARDWARE_CODE_H4_SYNC = 0x01;
/** Octets a host may leave unread before its connection is dropped. */
const UNREAD_LIMIT = 16 * 2 ** 20;

/**
 * A radio medium that hosts in other processes attach to over TCP (H4 framing), like rootcanal's
 * HCI port: each connection gets its own VirtualController on the shared medium, for as long as
 * the connection lasts. `rpmlab device|gateway --ble tcp://…`, Bumble (`tcp-client:`), or BlueZ
 * through `socat` and `btattach` on a pty can all attach.
 */
export class ControllerServer {
  private readonly sockets = new Set<Socket>();
  private nextHost = 1;

  private constructor(
    private readonly server: Server,
    private readonly radio: EmulatedRadio,
  ) {
    server.on("connection", (socket) => this.accept(socket));
  }

  static listen(radio: EmulatedRadio, host: string, port: number): Promise<ControllerServer> {
    const server = createServer();
    return new Promise((resolve, reject) => {
      server.once("error", (error) =>
        reject(
          // A taken port is E_PORT_IN_USE, as for the HTTP API and the broker.
          isAddressInUse(error)
            ? new RpmlabError(
                "E_PORT_IN_USE",
                `port ${port} on ${host} is taken: choose another with --listen tcp://${host}:N, or tcp://${host}:0 for any free one`,
                { field: "listen", port },
                error,
              )
            : new RpmlabError(
                "E_BLE_TRANSPORT",
                `cannot listen on tcp://${host}:${port}: ${error.message}`,
                {},
                error,
              ),
        ),
      );
      server.listen(port, host, () => resolve(new ControllerServer(server, radio)));
    });
  }

  /** The port actually bound (for port 0). */
  get port(): number {
    const address = this.server.address();
    return typeof address === "object" && address !== null ? address.port : 0;
  }

  private accept(socket: Socket): void {
    socket.setNoDelay(true);
    this.sockets.add(socket);
    const controller: VirtualController = this.radio.controller(`tcp-host-${this.nextHost++}`);
    const detach = controller.attach((packet) => {
      if (socket.destroyed) return;
      // A host that stops reading stops being read (TCP flow control then holds its sender),
      // and one that never reads what the radio keeps sending it (advertising reports) is let go.
      if (!socket.write(packet)) socket.pause();
      if (socket.writableLength > UNREAD_LIMIT) socket.destroy();
    });
    socket.on("drain", () => socket.resume());
    const framer = new H4Framer(
      {
        packet: (p) => controller.receive(p),
        desync: () => {
          controller.stats.badPackets++;
          controller.toHost(ev.hardwareError(HARDWARE_CODE_H4_SYNC));
        },
      },
      // Vol 4 Part E §7.8.2: no ACL packet longer than the LE buffer the controller announces.
      { [H4.ACL]: controller.aclBufferLength },
    );
    socket.on("data", (chunk) => framer.push(chunk));
    socket.on("error", () => socket.destroy());
    socket.on("close", () => {
      this.sockets.delete(socket);
      detach();
      this.radio.release(controller);
    });
  }

  /** Stops listening and drops every attached host. */
  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
