// rpmlab: npm `overrides` in the root package.json install this package wherever noble or bleno
// ask for @abandonware/bluetooth-hci-socket, so neither stack ever loads a native addon on the
// emulated path. `new BluetoothHciSocket()` returns the socket that src/ble/socket/provider.ts
// chose for the host being loaded (same API: bindRaw/bindUser/bindControl/start/stop/isDevUp/
// setFilter/write/getDeviceList, `data` and `error` events). Plain CommonJS with no dependency:
// the hosts require it synchronously while they are being constructed.
const SLOT = Symbol.for("rpmlab.hci-socket.provider");

function BluetoothHciSocket() {
  const provider = globalThis[SLOT];
  if (typeof provider !== "function") {
    const error = new Error(
      "rpmlab hci-socket shim: no HCI backend is selected. noble and bleno are loaded through " +
        "rpmlab's src/ble (loadNoble/loadBleno), which chooses emulated, tcp://host:port or hci:N.",
    );
    error.code = "E_BLE_NO_BACKEND";
    throw error;
  }
  return provider();
}

module.exports = BluetoothHciSocket;
