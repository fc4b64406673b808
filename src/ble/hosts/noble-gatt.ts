/** noble's GATT client, one per connection, as far as the client guard uses it (lib/hci-socket/gatt.js). */
export interface NobleGatt {
  readonly _address: string;
  /** The connection's ATT_MTU: what noble's reads, writes and long writes are sized by. */
  _mtu: number;
  /** noble's Client Rx MTU (256). */
  readonly _desired_mtu: number;
  readonly _characteristics: Record<string, Record<string, NobleCharacteristic>>;
  /** The request awaiting its response, then the queue behind it (noble's `_queueCommand`). */
  _currentCommand: NobleCommand | null;
  readonly _commandQueue: NobleCommand[];
  /** 'medium' once the link is encrypted; until then an authentication error starts pairing. */
  _security: string;
  writeAtt(data: Buffer): void;
  onAclStreamData(cid: number, data: Buffer): void;
  onAclStreamEncrypt(encrypt: number | boolean): void;
  onAclStreamEncryptFail(): void;
  _queueCommand(
    buffer: Buffer,
    callback: ((data: Buffer) => void) | null,
    writeCallback?: () => void,
  ): void;
  mtuRequest(mtu: number): Buffer;
  handleConfirmation(): Buffer;
  mtuResponse(mtu: number): Buffer;
  readRequest(handle: number): Buffer;
  readBlobRequest(handle: number, offset: number): Buffer;
  readByTypeRequest(startHandle: number, endHandle: number, type: number): Buffer;
  writeRequest(handle: number, data: Buffer, withoutResponse: boolean): Buffer;
  prepareWriteRequest(handle: number, offset: number, data: Buffer): Buffer;
  executeWriteRequest(handle: number, cancelPreparedWrites?: boolean): Buffer;
  emit(event: "mtu", address: string, mtu: number): boolean;
  emit(event: "handleConfirmation", address: string, handle: number): boolean;
  emit(
    event: "read",
    address: string,
    service: string,
    uuid: string,
    value: Buffer | Error,
  ): boolean;
  emit(event: "write", address: string, service: string, uuid: string, error?: Error): boolean;
  emit(
    event: "notify",
    address: string,
    service: string,
    uuid: string,
    state: boolean | Error,
  ): boolean;
  exchangeMtu(): void;
  read(serviceUuid: string, characteristicUuid: string): void;
  write(
    serviceUuid: string,
    characteristicUuid: string,
    data: Buffer,
    withoutResponse: boolean,
  ): void;
  notify(serviceUuid: string, characteristicUuid: string, notify: boolean): void;
}

/** A characteristic as noble's discovery records it: its handles and raw properties. */
export interface NobleCharacteristic {
  /** Its declaration. */
  readonly startHandle: number;
  readonly valueHandle: number;
  /** The last handle of its descriptors. */
  readonly endHandle: number;
  readonly properties: number;
}

export interface NobleCommand {
  readonly buffer: Buffer;
  readonly callback: ((data: Buffer) => void) | null | undefined;
  readonly writeCallback: (() => void) | undefined;
}
