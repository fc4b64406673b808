import { createRequire } from "node:module";
import { nobleMultiRole } from "../../config/noble-env.ts";
import { guardGattWrites } from "./att-client-writes.ts";
import { discoveryFault, noteDiscoveryFault } from "./att-discovery-guard.ts";
import { attFailure } from "./att-errors.ts";
import { agreedMtu } from "./att-mtu-exchange.ts";
import type { NobleGatt } from "./noble-gatt.ts";
import { guardPairing, noteRefusal, standingRefusal } from "./noble-pairing.ts";

const ATT_CID = 0x0004;
const ERROR_RESPONSE = 0x01;
const INVALID_PDU = 0x04;
const READ_RESPONSE = 0x0b;
const READ_BLOB_RESPONSE = 0x0d;
const ATTRIBUTE_NOT_FOUND = 0x0a;
const ATTRIBUTE_NOT_LONG = 0x0b;
/** The longest attribute value (Vol 3 Part F §3.2.9). */
const MAX_VALUE_LENGTH = 512;

const HANDLE_VALUE_NOTIFICATION = 0x1b;
const HANDLE_VALUE_INDICATION = 0x1d;
const EXCHANGE_MTU_REQUEST = 0x02;
const EXCHANGE_MTU_RESPONSE = 0x03;
const GUARDED = Symbol.for("rpmlab.noble.gatt-client-guard");
const require = createRequire(import.meta.url);

/**
 * Puts the lab's Exchange MTU in place of noble's, for every noble central of this thread (noble
 * keeps one GATT client class per module instance, and each connection gets a new object of it,
 * made and started inside its connection handler). noble took the Server Rx MTU of the Exchange
 * MTU Response as the connection's ATT_MTU, where both sides use min(Client Rx MTU, Server Rx
 * MTU) (Vol 3 Part F §3.4.2.2): a peripheral answering 517 (BlueZ, Zephyr, Android) kept 256
 * while noble used 517, so a Read Response of 255 octets (ATT_MTU−1, §3.4.4.4) no longer led
 * noble to Read Blob and long values came back cut, and writes up to 514 octets went out as one
 * Write Request the peripheral may refuse. Otherwise as noble's: its Client Rx MTU in the
 * request, and the `mtu` event (noble's peripheral.mtu) once the exchange ends, answered or not.
 * Reads as noble's, but one answered with an Error Response fails; an Invalid PDU completes
 * the request it answers; the peripheral's own Exchange MTU sets ATT_MTU too (see below).
 * Writes and subscriptions complete or fail by the peripheral's answer (att-client-writes.ts),
 * and pairing as noble-pairing.ts says.
 */
export function guardGattClient(): void {
  const gatt = require("@abandonware/noble/lib/hci-socket/gatt") as {
    prototype: NobleGatt & { [GUARDED]?: true };
  };
  const proto = gatt.prototype;
  if (proto[GUARDED]) return;
  proto[GUARDED] = true;
  guardGattWrites(proto);
  proto.exchangeMtu = function (this: NobleGatt): void {
    this._queueCommand(this.mtuRequest(this._desired_mtu), (data) => {
      // The L2CAP guard has dropped a response too short for its field.
      if (data[0] === EXCHANGE_MTU_RESPONSE) {
        this._mtu = agreedMtu(this._desired_mtu, data.readUInt16LE(1));
      }
      this.emit("mtu", this._address, this._mtu);
    });
  };
  // noble dropped every Error Response with Invalid PDU (0x04), taking it for a refused Exchange
  // MTU: the request it answered never completed, and every later one on the connection queued
  // behind it for ever. It completes its request here as any other Error Response does; the
  // exchange above keeps ATT_MTU 23 on it, as on Request Not Supported (0x06).
  //
  // The peripheral's own Exchange MTU Request: noble answered its Server Rx MTU (256) but kept
  // its ATT_MTU, where the lesser of the two Rx MTUs applies to the connection on both sides
  // (§3.4.2.2), so at a peripheral's 185 noble sized reads and writes by 256 or 23. Answered
  // here, also while noble's own request waits: noble dropped a request equal to its own (0x02
  // 0x00 0x01) as an echo of it. With NOBLE_MULTI_ROLE bleno answers, as noble leaves it.
  const onAclStreamData = proto.onAclStreamData;
  const multiRole = nobleMultiRole();
  proto.onAclStreamData = function (this: NobleGatt, cid: number, data: Buffer): void {
    if (cid === ATT_CID && data[0] === EXCHANGE_MTU_REQUEST && !multiRole) {
      this.writeAtt(this.mtuResponse(this._desired_mtu));
      this._mtu = agreedMtu(data.readUInt16LE(1), this._desired_mtu);
      this.emit("mtu", this._address, this._mtu);
      return;
    }
    if (cid === ATT_CID && data[0] === HANDLE_VALUE_INDICATION) {
      confirmAtOnce(this, data, onAclStreamData);
      return;
    }
    if (cid === ATT_CID && endsMalformedDiscovery(this, data)) return;
    const standing = cid === ATT_CID ? standingRefusal(this, data) : undefined;
    if (standing !== undefined) {
      completeCommand(this, standing);
      return;
    }
    if (cid === ATT_CID) noteRefusal(this, data);
    if (cid !== ATT_CID || data[0] !== ERROR_RESPONSE || data[4] !== INVALID_PDU) {
      onAclStreamData.call(this, cid, data);
      return;
    }
    completeCommand(this, data);
  };
  guardPairing(proto, completeCommand);
  // noble's read, but an Error Response fails the read: noble ended it with the value read so
  // far (none for a Read Request), so a refused read came back as an empty value. The error
  // goes where the value goes, noble's `read` event, and CentralLink.read throws it.
  proto.read = function (this: NobleGatt, serviceUuid: string, characteristicUuid: string): void {
    const { valueHandle } = this._characteristics[serviceUuid]![characteristicUuid]!;
    let value = Buffer.alloc(0);
    const done = (result: Buffer | Error): void => {
      this.emit("read", this._address, serviceUuid, characteristicUuid, result);
    };
    const callback = (data: Buffer): void => {
      if (data[0] === READ_RESPONSE || data[0] === READ_BLOB_RESPONSE) {
        value = Buffer.concat([value, data.subarray(1)]);
        // No attribute value is longer (§3.2.9): a peripheral whose Read Blob ignores its
        // offset had noble read on without end, until the offset overflowed and noble threw.
        if (value.length > MAX_VALUE_LENGTH) {
          done(new Error(`value runs past ${MAX_VALUE_LENGTH} octets (Vol 3 Part F §3.2.9)`));
          return;
        }
        // A part of ATT_MTU−1 octets may not be the last (§3.4.4.4): Read Blob for the rest.
        if (data.length === this._mtu && value.length < MAX_VALUE_LENGTH) {
          this._queueCommand(this.readBlobRequest(valueHandle, value.length), callback);
        } else done(value);
      } else if (data[0] === ERROR_RESPONSE && !(data[4] === ATTRIBUTE_NOT_LONG && value.length)) {
        done(attFailure(data));
      } else {
        // A Read Blob refused as Attribute Not Long (the value was exactly ATT_MTU−1 octets), or
        // a response of another type: the value so far, as noble ends it.
        done(value);
      }
    };
    this._queueCommand(this.readRequest(valueHandle), callback);
  };
}

/**
 * An indication, confirmed as it comes: noble queued its Handle Value Confirmation behind the
 * request awaiting its response (and every request queued after it), though the confirmation
 * is no request (Vol 3 Part F §3.3.2, §3.4.7.3); the peripheral, which sends no other indication
 * until confirmed, waited on a response it may hold. Its value then goes where noble passes a
 * notification's (a characteristic's `data` either way).
 */
function confirmAtOnce(
  gatt: NobleGatt,
  indication: Buffer,
  onAclStreamData: (this: NobleGatt, cid: number, data: Buffer) => void,
): void {
  gatt.writeAtt(gatt.handleConfirmation());
  const notification = Buffer.from(indication);
  notification[0] = HANDLE_VALUE_NOTIFICATION;
  onAclStreamData.call(gatt, ATT_CID, notification);
  gatt.emit("handleConfirmation", gatt._address, indication.readUInt16LE(1));
}

/**
 * A discovery response whose handles noble would loop on (att-discovery-guard.ts): noted for
 * CentralLink.discover to fail on, and its request completed as Attribute Not Found, on which
 * noble ends that part of the discovery with what it has.
 */
function endsMalformedDiscovery(gatt: NobleGatt, data: Buffer): boolean {
  const request = gatt._currentCommand?.buffer;
  if (request === undefined) return false;
  const fault = discoveryFault(request, data);
  if (fault === undefined) return false;
  noteDiscoveryFault(gatt._address, fault);
  completeCommand(
    gatt,
    Buffer.from([ERROR_RESPONSE, request[0]!, request[1]!, request[2]!, ATTRIBUTE_NOT_FOUND]),
  );
  return true;
}

/** Completes the request awaiting its response with `data`, then goes on as noble goes on. */
function completeCommand(gatt: NobleGatt, data: Buffer): void {
  const command = gatt._currentCommand;
  if (command === null) return;
  command.callback?.(data);
  gatt._currentCommand = null;
  // The next request is sent, commands (no response) on the way.
  for (let next = gatt._commandQueue.shift(); next; next = gatt._commandQueue.shift()) {
    gatt._currentCommand = next;
    gatt.writeAtt(next.buffer);
    if (next.callback) return;
    next.writeCallback?.();
    gatt._currentCommand = null;
  }
}
