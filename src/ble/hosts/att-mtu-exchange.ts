/**
 * Exchange MTU (Vol 3 Part F §3.4.2): answered in front of bleno's GATT server here, and the
 * ATT_MTU noble's client takes from the response in att-client-guard.ts.
 */

/** bleno's GATT server, as far as the exchange reads and sets it (lib/hci-socket/gatt.js). */
export interface MtuGatt {
  /** The connection's ATT_MTU (23 at each new connection). */
  _mtu: number;
  /** The largest ATT PDU bleno takes: its Server Rx MTU. */
  readonly maxMtu: number;
  readonly _aclStream: object | null;
  send(data: Buffer): void;
  emit(event: "mtuChange", mtu: number): boolean;
}

/** The connections of one server that have exchanged MTU, by their ACL stream (new per connection). */
export type MtuExchanges = WeakSet<object>;

const EXCHANGE_MTU_RESPONSE = 0x03;
/** The LE default ATT_MTU (Vol 3 Part G §5.2.1). */
const DEFAULT_ATT_MTU = 23;

/** The ATT_MTU both sides use after an exchange: the lesser Rx MTU, never under 23 (§3.4.2.2). */
export function agreedMtu(clientRx: number, serverRx: number): number {
  return Math.max(DEFAULT_ATT_MTU, Math.min(clientRx, serverRx));
}

/**
 * Answers an Exchange MTU Request with the Server Rx MTU and sets the connection's ATT_MTU.
 * bleno answered min(Client Rx MTU, 256) — the client's own value, not the server's (§3.4.2.2:
 * the Server Rx MTU is the largest PDU the server can receive; both sides then take the minimum)
 * — and a second request set ATT_MTU afresh, so it could raise it mid-connection although
 * §3.4.2.1 lets the client send one per connection. As BlueZ's gatt-server (exchange_mtu_cb),
 * once exchanged the server offers the connection's ATT_MTU, so a second request can lower it,
 * never raise it, and both sides still agree on the minimum. A Client Rx MTU under 23 leaves 23
 * (§3.4.2.2). The ATT_MTU applies once the response is sent (§3.4.2.2), so mtuChange follows it.
 */
export function exchangeMtu(request: Buffer, gatt: MtuGatt, exchanges: MtuExchanges): void {
  const stream = gatt._aclStream;
  const serverRx = stream !== null && exchanges.has(stream) ? gatt._mtu : gatt.maxMtu;
  const mtu = agreedMtu(request.readUInt16LE(1), serverRx);
  const response = Buffer.alloc(3);
  response[0] = EXCHANGE_MTU_RESPONSE;
  response.writeUInt16LE(serverRx, 1);
  gatt.send(response);
  if (stream !== null) exchanges.add(stream);
  gatt._mtu = mtu;
  gatt.emit("mtuChange", mtu);
}
