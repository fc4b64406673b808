import { ByteReader, ByteWriter } from "../cursor.ts";

/** GSS Battery Level (0x2A19): uint8 percent, 0–100; 101–255 are reserved. */
const NAME = "Battery Level";
const writer = new ByteWriter(1, NAME);

export function encodeBatteryLevel(percent: number): Uint8Array {
  const w = writer.start();
  if (percent > 100) throw w.fail("E_CODEC_RANGE", "battery_level", `${percent} is over 100 %`);
  w.u8(percent, "battery_level");
  return w.finish();
}

export function decodeBatteryLevel(bytes: Uint8Array): number {
  const r = new ByteReader(bytes, NAME);
  const percent = r.u8("battery_level");
  if (percent > 100) {
    throw r.fail(
      "E_CODEC_RANGE",
      "battery_level",
      0,
      `${percent} is over 100 % (101–255 reserved)`,
    );
  }
  r.end("battery_level");
  return percent;
}
