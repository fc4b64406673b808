import { createRequire } from "node:module";
import { agreedMtu } from "./att-mtu-exchange.ts";

/** noble's GATT client, one per connection, as far as the exchange uses it (lib/hci-socket/gatt.js). */
interface NobleGatt {
  readonly _address: string;
  /** The connection's ATT_MTU: what noble's reads, writes and long writes are sized by. */
  _mtu: number;
  /** noble's Client Rx MTU (256). */
  readonly _desired_mtu: number;
  _queueCommand(buffer: Buffer, callback: (data: Buffer) => void): void;
  mtuRequest(mtu: number): Buffer;
  emit(event: "mtu", address: string, mtu: number): boolean;
  exchangeMtu(): void;
}

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
 */
export function guardGattClient(): void {
  const gatt = require("@abandonware/noble/lib/hci-socket/gatt") as {
    prototype: NobleGatt & { [GUARDED]?: true };
  };
  const proto = gatt.prototype;
  if (proto[GUARDED]) return;
  proto[GUARDED] = true;
  proto.exchangeMtu = function (this: NobleGatt): void {
    this._queueCommand(this.mtuRequest(this._desired_mtu), (data) => {
      // The L2CAP guard has dropped a response too short for its field.
      if (data[0] === EXCHANGE_MTU_RESPONSE) {
        this._mtu = agreedMtu(this._desired_mtu, data.readUInt16LE(1));
      }
      this.emit("mtu", this._address, this._mtu);
    });
  };
}
