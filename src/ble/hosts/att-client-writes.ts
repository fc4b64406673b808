/**
 * noble's writes and subscriptions (lib/hci-socket/gatt.js write, longWrite, notify), completed
 * by the peripheral's answer whatever it is. noble emitted its `write` and `notify` events on a
 * Write Response or Execute Write Response only: a write or a CCCD write the peripheral refused
 * with an Error Response (Write Not Permitted, 0xFD…), or a subscribe to a characteristic
 * without a CCCD, never completed, and the caller waited for ever. Here such a request fails
 * naming the ATT error, as a refused read does (att-client-guard.ts).
 */
import { createRequire } from "node:module";
import { attErrorText, attFailure } from "./att-errors.ts";
import type { NobleCommand, NobleGatt } from "./noble-gatt.ts";

const READ_BY_TYPE_RESPONSE = 0x09;
const WRITE_RESPONSE = 0x13;
const PREPARE_WRITE_RESPONSE = 0x17;
const EXECUTE_WRITE_RESPONSE = 0x19;
const ERROR_RESPONSE = 0x01;
const ATTRIBUTE_NOT_FOUND = 0x0a;
/** The Execute Write Request's Flags octet: 0x00 cancels every prepared write (§3.4.6.3). */
const CANCEL_PREPARED_WRITES = 0x00;
const CCCD_UUID = 0x2902;
/** Characteristic Properties (Vol 3 Part G §3.3.1.1). */
const NOTIFY = 0x10;
const INDICATE = 0x20;
const require = createRequire(import.meta.url);

type Done = (error?: Error) => void;

/** Puts the writes and subscriptions below in place of noble's, on its GATT client class. */
export function guardGattWrites(proto: NobleGatt): void {
  forwardWriteErrors();
  proto.write = function (this: NobleGatt, serviceUuid, characteristicUuid, data, withoutResponse) {
    const { valueHandle } = this._characteristics[serviceUuid]![characteristicUuid]!;
    const done: Done = (error) =>
      this.emit("write", this._address, serviceUuid, characteristicUuid, error);
    if (withoutResponse) {
      this._queueCommand(this.writeRequest(valueHandle, data, true), null, () => done());
    } else if (data.length + 3 > this._mtu) {
      longWrite(this, valueHandle, data, done);
    } else {
      this._queueCommand(this.writeRequest(valueHandle, data, false), (response) =>
        done(response[0] === WRITE_RESPONSE ? undefined : attFailure(response)),
      );
    }
  };
  proto.notify = function (this: NobleGatt, serviceUuid, characteristicUuid, notify) {
    const characteristic = this._characteristics[serviceUuid]![characteristicUuid]!;
    const done = (state: boolean | Error): void => {
      this.emit("notify", this._address, serviceUuid, characteristicUuid, state);
    };
    const { startHandle, endHandle, properties } = characteristic;
    const find = this.readByTypeRequest(startHandle, endHandle, CCCD_UUID);
    this._queueCommand(find, (found) => {
      if (found[0] !== READ_BY_TYPE_RESPONSE) {
        done(missingCccd(found));
        return;
      }
      const handle = found.readUInt16LE(2);
      // A peripheral that ignores the range answers another characteristic's CCCD (§3.4.4.1):
      // noble enabled that one, and the session waited for values that never come.
      if (handle < startHandle || handle > endHandle) {
        const range = `${hex(startHandle)}–${hex(endHandle)}`;
        done(
          new Error(
            `CCCD at handle ${hex(handle)} is outside the characteristic's handles ${range}`,
          ),
        );
        return;
      }
      // As noble: the bit the characteristic has, Notification before Indication.
      const bit = properties & NOTIFY ? 0x0001 : properties & INDICATE ? 0x0002 : 0;
      // An entry without its value (Length 2) read as 0x0000: noble read past the response and
      // threw, and the subscribe never completed.
      const current = found.length >= 6 ? found.readUInt16LE(4) : 0;
      const value = Buffer.alloc(2);
      value.writeUInt16LE(notify ? current | bit : current & ~bit, 0);
      this._queueCommand(this.writeRequest(handle, value, false), (response) =>
        done(response[0] === WRITE_RESPONSE ? notify : attFailure(response)),
      );
    });
  };
}

const hex = (handle: number): string => `0x${handle.toString(16).padStart(4, "0")}`;

function missingCccd(response: Buffer): Error {
  if (response[0] !== ERROR_RESPONSE || response[4] !== ATTRIBUTE_NOT_FOUND) {
    return attFailure(response);
  }
  return new Error(
    `no Client Characteristic Configuration descriptor (${attErrorText(ATTRIBUTE_NOT_FOUND)})`,
  );
}

/**
 * Write Long Characteristic Values (Vol 3 Part G §4.9.4): Prepare Write Requests of ATT_MTU−5
 * octets, then an Execute Write Request, queued together as noble queues them so that no other
 * request comes between. noble sent every part whatever the answers, and executed the parts the
 * peripheral took though one was refused. Here the first refused part (Prepare Queue Full,
 * Insufficient Authentication…) ends the write: the parts queued behind it are not sent, and the
 * Execute Write cancels what the peripheral has queued (Flags 0x00, Vol 3 Part F §3.4.6.3), so
 * that no part is left there for a later Execute Write to apply. The write fails naming the
 * refusal, or the Execute Write's own Error Response (Invalid Offset, Invalid Attribute Value
 * Length: §3.4.6.3 checks those there).
 */
function longWrite(gatt: NobleGatt, handle: number, data: Buffer, done: Done): void {
  const limit = gatt._mtu - 5;
  const execute = gatt.executeWriteRequest(handle, false);
  const parts = new Set<NobleCommand["callback"]>();
  let refused: Error | undefined;
  for (let offset = 0; offset < data.length; offset += limit) {
    const prepared = (response: Buffer): void => {
      if (response[0] === PREPARE_WRITE_RESPONSE || refused !== undefined) return;
      refused = attFailure(response);
      const queue = gatt._commandQueue;
      for (let i = queue.length - 1; i >= 0; i--) {
        if (parts.has(queue[i]!.callback)) queue.splice(i, 1);
      }
      execute[1] = CANCEL_PREPARED_WRITES;
    };
    parts.add(prepared);
    const part = data.subarray(offset, offset + limit);
    gatt._queueCommand(gatt.prepareWriteRequest(handle, offset, part), prepared);
  }
  gatt._queueCommand(execute, (response) => {
    if (refused !== undefined) done(refused);
    else done(response[0] === EXECUTE_WRITE_RESPONSE ? undefined : attFailure(response));
  });
}

type WriteListener = (this: WriteEmitter, ...args: [string, string, string, Error?]) => void;
interface WriteEmitter {
  emit(event: "write", ...args: unknown[]): boolean;
  readonly _characteristics?: Record<
    string,
    Record<string, Record<string, { emit(event: "write", error?: Error): boolean }>>
  >;
}

/**
 * noble passes its `write` event from the GATT client through its bindings to the characteristic
 * without arguments: the error of a failed write is passed on here (CentralLink.write reads it).
 * Noble's constructor binds its handler, so this runs before any noble is made.
 */
function forwardWriteErrors(): void {
  const bindings = require("@abandonware/noble/lib/hci-socket/bindings") as {
    prototype: { onWrite: WriteListener };
  };
  const noble = require("@abandonware/noble/lib/noble") as {
    prototype: { onWrite: WriteListener };
  };
  const onBindingsWrite = bindings.prototype.onWrite;
  bindings.prototype.onWrite = function (address, serviceUuid, characteristicUuid, error) {
    if (error === undefined) onBindingsWrite.call(this, address, serviceUuid, characteristicUuid);
    else
      this.emit(
        "write",
        address.replaceAll(":", "").toLowerCase(),
        serviceUuid,
        characteristicUuid,
        error,
      );
  };
  const onNobleWrite = noble.prototype.onWrite;
  noble.prototype.onWrite = function (peripheralUuid, serviceUuid, characteristicUuid, error) {
    const characteristic =
      this._characteristics?.[peripheralUuid]?.[serviceUuid]?.[characteristicUuid];
    if (error === undefined || characteristic === undefined) {
      onNobleWrite.call(this, peripheralUuid, serviceUuid, characteristicUuid);
    } else characteristic.emit("write", error);
  };
}
