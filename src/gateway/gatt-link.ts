/**
 * What a gateway session needs of a connection to a device (ble-session.ts): discovery, reads,
 * writes, subscriptions, disconnection. Two implementations: CentralLink (src/ble/hosts, noble
 * over an HCI socket: emulated, tcp://, hci:N) and DirectLink (direct-link.ts: the device's GATT
 * database in this process, no HCI, for fleets). The session logic above it is the same.
 */
export interface GattLink {
  /** Device address, lower case with colons, as noble prints it. */
  readonly address: string;
  /** ATT_MTU of the link, when known. */
  readonly mtu: number | null;
  /** Fires once when the link drops, whoever ends it. */
  onDisconnect(listener: (reason: number | undefined) => void): void;
  /** Every service and characteristic: characteristic UUIDs (src/gatt spelling) by service. */
  discover(): Promise<Map<string, string[]>>;
  /** Whether the characteristic pushes values (notify or indicate). */
  canSubscribe(uuid: string): boolean;
  read(uuid: string): Promise<Uint8Array>;
  write(uuid: string, value: Uint8Array): Promise<void>;
  /** Enables notifications or indications; `onValue` gets every value pushed after. */
  subscribe(uuid: string, onValue: (value: Buffer) => void): Promise<void>;
  disconnect(): Promise<void>;
}
