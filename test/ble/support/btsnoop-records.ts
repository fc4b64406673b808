/** [monitor opcode, payload] of each record after the btsnoop header (src/ble/btsnoop.ts). */
export function btsnoopRecords(file: Buffer): Array<[number, Buffer]> {
  const out: Array<[number, Buffer]> = [];
  for (let at = 16; at < file.length; ) {
    const length = file.readUInt32BE(at + 4);
    out.push([file.readUInt32BE(at + 8) & 0xffff, file.subarray(at + 24, at + 24 + length)]);
    at += 24 + length;
  }
  return out;
}
