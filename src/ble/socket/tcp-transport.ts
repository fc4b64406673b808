import { connect, type Socket } from "node:net";
import { RpmlabError } from "../../core/errors.ts";
import { H4Framer } from "../hci/h4-framer.ts";
import type { HciTransport } from "./transport.ts";

/**
 * H4 over TCP, as rootcanal and Bumble's tcp-client transport speak it: the host side of a
 * controller in another process (`rpmlab controller --listen`), or any H4 server.
 */
export class TcpTransport implements HciTransport {
  private receiver: (packet: Buffer) => void = () => undefined;
  private onError: (error: Error) => void = () => undefined;
  private onLost: (error: Error) => void = () => undefined;
  /** Resolves when the controller closes the connection or it fails; never on close(). */
  readonly lost = new Promise<Error>((resolve) => {
    this.onLost = resolve;
  });

  private constructor(private readonly socket: Socket) {
    const framer = new H4Framer({
      packet: (p) => this.receiver(p),
      desync: (byte) =>
        this.onError(
          new RpmlabError(
            "E_BLE_TRANSPORT",
            `H4 stream from the controller lost sync at byte 0x${byte.toString(16)}`,
          ),
        ),
    });
    socket.on("data", (chunk) => framer.push(chunk));
    let failure: Error | undefined;
    socket.on("error", (error) => {
      failure = new RpmlabError("E_BLE_TRANSPORT", `HCI over TCP: ${error.message}`, {}, error);
      this.onError(failure);
    });
    socket.on("close", () => {
      const closed = new RpmlabError(
        "E_BLE_TRANSPORT",
        "HCI over TCP: the controller closed the connection",
      );
      this.onError(closed);
      this.onLost(failure ?? closed);
    });
  }

  /** Connects; rejects with E_BLE_TRANSPORT when nothing listens there. */
  static open(host: string, port: number): Promise<TcpTransport> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port });
      socket.setNoDelay(true);
      socket.once("connect", () => resolve(new TcpTransport(socket)));
      socket.once("error", (error) =>
        reject(
          new RpmlabError(
            "E_BLE_TRANSPORT",
            `cannot reach an HCI controller at tcp://${host}:${port}: ${error.message}`,
            {},
            error,
          ),
        ),
      );
    });
  }

  send(packet: Buffer): void {
    if (!this.socket.destroyed) this.socket.write(packet);
  }

  setReceiver(receiver: (packet: Buffer) => void): void {
    this.receiver = receiver;
  }

  setErrorHandler(handler: (error: Error) => void): void {
    this.onError = handler;
  }

  close(): void {
    this.onError = () => undefined;
    this.onLost = () => undefined;
    this.socket.destroy();
  }
}
