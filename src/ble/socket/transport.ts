/**
 * The one thing under the socket: a channel that carries whole H4 packets (indicator first) to a
 * controller and back. Implementations: in-process (direct-transport.ts), a worker's message port
 * (port-transport.ts), H4 over TCP (tcp-transport.ts). The native hci:N path does not use one:
 * there the kernel's socket is the transport.
 */
export interface HciTransport {
  /** One H4 packet to the controller. */
  send(packet: Buffer): void;
  /** Where packets from the controller go; set once by the adapter. */
  setReceiver(receiver: (packet: Buffer) => void): void;
  /** Called when the transport fails or the far end goes away. */
  setErrorHandler?(handler: (error: Error) => void): void;
  close(): void;
}
