/**
 * What the gateway's BLE side hands to the gateway runtime: raw characteristic values, as
 * received, never decoded (the gateway is a dumb pipe; ingestion decodes with the same codecs).
 */
export interface RawCharacteristicValue {
  /** Device address as noble prints it, lower case with colons. */
  readonly deviceAddress: string;
  /** Sensor code from the device's advertisement, when it sent one. */
  readonly sensorCode: string | undefined;
  /** Characteristic UUID as src/gatt/uuids.ts spells it. */
  readonly uuid: string;
  readonly value: Uint8Array;
  /** Gateway receive time, ms since the epoch (the gateway's Clock). */
  readonly receivedAt: number;
  /** Record sequence number, when the value carries one (RACP bookkeeping). */
  readonly sequence: number | undefined;
  /** True for records fetched from the device's store (RACP or stored-measurement flush). */
  readonly stored: boolean;
  /**
   * The device's clock was found unset at the start of this visit (ble-session.ts): the
   * reading's own timestamp is not to be trusted (envelope `clock_unset`).
   */
  readonly clockUnset: boolean;
}

/** The gateway runtime's side of the boundary. */
export interface RawValueSink {
  deliver(value: RawCharacteristicValue): void;
}
