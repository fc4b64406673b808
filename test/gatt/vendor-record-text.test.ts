/**
 * A Vendor Record's text filter param (uint8 length + UTF-8, e.g. the inhaler's serial_number)
 * that is not UTF-8 is refused naming the first byte that starts no valid character.
 */
import { describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { mappingFor } from "../../src/gatt/mapping.ts";
import { decodeVendorRecord } from "../../src/gatt/vendor/record.ts";
import { refusal } from "../support/refusal.ts";

const catalogue = Catalogue.load();
const profile = catalogue.get("Vendor Inhaler Sensor");
const SERIAL = "XY9876";

/** An inhaler record whose serial number "XY9876" starts at the returned offset. */
function inhalerRecord(): { value: Uint8Array; serialAt: number } {
  const [v] = mappingFor(profile).encode(
    {
      timestamp: Date.UTC(2024, 9, 16, 4, 10),
      timezone_offset: 0,
      records: [
        {
          metric: "inhaler_shake_detection_event",
          value_1: 1,
          value_2: 2.5,
          filter_params: {
            serial_number: SERIAL,
            device_log_index: 8,
            flags: { shake_intensity: 3 },
          },
        },
      ],
    },
    profile,
  );
  const value = Uint8Array.from(v!.value);
  const text = new TextEncoder().encode(SERIAL);
  const serialAt = value.findIndex((_, i) => text.every((b, j) => value[i + j] === b));
  expect(value[serialAt - 1]).toBe(SERIAL.length);
  return { value, serialAt };
}

describe("Vendor Record text filter param that is not UTF-8", () => {
  // A lone continuation byte, a lead byte cut short by an ASCII byte, an overlong encoding.
  for (const [name, index, bytes] of [
    ["a lone continuation byte", 3, [0x80]],
    ["a two-byte lead before an ASCII byte", 2, [0xc3]],
    ["an overlong encoding of '/'", 4, [0xc0, 0xaf]],
  ] as const) {
    it(`names the byte at fault: ${name}`, () => {
      const { value, serialAt } = inhalerRecord();
      value.set(bytes, serialAt + index);
      const error = refusal(() => decodeVendorRecord(value, profile));
      expect(error.code).toBe("E_CODEC_RANGE");
      expect(error.details).toMatchObject({
        field: "inhaler_shake_detection_event.filter_params.serial_number",
        offset: serialAt + index,
      });
      expect(error.message).toContain(`at byte ${serialAt + index}`);
    });
  }
});
