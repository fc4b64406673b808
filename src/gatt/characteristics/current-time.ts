import { MS_PER_DAY, utcFields } from "../../core/time.ts";
import { type BitFlags, BitTable } from "../bits.ts";
import { ByteReader, ByteWriter } from "../cursor.ts";
import type { DateTime } from "../date-time.ts";

/**
 * GSS Current Time (0x2A2B), CTS v1.1: Exact Time 256 (Day Date Time: Date Time, Day of Week
 * uint8 0 = unknown, 1 = Monday … 7 = Sunday; then Fractions256 uint8, 1/256 s), then Adjust
 * Reason uint8 (bit 0 manual time update, bit 1 external reference time update, bit 2 change of
 * time zone, bit 3 change of DST; bits 4–7 RFU). 10 bytes.
 */
const ADJUST_REASON = new BitTable({
  manualTimeUpdate: 0,
  externalReferenceTimeUpdate: 1,
  changeOfTimeZone: 2,
  changeOfDst: 3,
});
export type AdjustReason = BitFlags<(typeof ADJUST_REASON.names)[number]>;

export interface CurrentTime {
  readonly dateTime: DateTime;
  /** 0 = unknown, 1 = Monday … 7 = Sunday. */
  readonly dayOfWeek: number;
  /** 1/256 second, 0–255. */
  readonly fractions256: number;
  readonly adjustReason: AdjustReason;
}

export const CURRENT_TIME_LENGTH = 10;
const NAME = "Current Time";
const writer = new ByteWriter(CURRENT_TIME_LENGTH, NAME);

export function encodeCurrentTime(t: CurrentTime): Uint8Array {
  const w = writer.start();
  w.dateTime(t.dateTime, "date_time");
  if (t.dayOfWeek > 7) throw w.fail("E_CODEC_RANGE", "day_of_week", `${t.dayOfWeek} is not 0–7`);
  w.u8(t.dayOfWeek, "day_of_week");
  w.u8(t.fractions256, "fractions256");
  ADJUST_REASON.write(w, 1, t.adjustReason, "adjust_reason");
  return w.finish();
}

export function decodeCurrentTime(bytes: Uint8Array): CurrentTime {
  const r = new ByteReader(bytes, NAME);
  const dateTime = r.dateTime("date_time");
  const dayOfWeek = r.u8("day_of_week");
  if (dayOfWeek > 7) throw r.fail("E_CODEC_RANGE", "day_of_week", 7, `${dayOfWeek} is not 0–7`);
  const fractions256 = r.u8("fractions256");
  const adjustReason = ADJUST_REASON.read(r, 1, "adjust_reason");
  r.end("adjust_reason");
  return { dateTime, dayOfWeek, fractions256, adjustReason };
}

/**
 * The Current Time a clock shows at epoch `ms` (add the UTC offset first for local time), with
 * the given adjust reason; sub-second time goes in Fractions256.
 */
export function currentTimeAt(
  ms: number,
  adjustReason: AdjustReason = ADJUST_REASON.none(),
): CurrentTime {
  const f = utcFields(Math.floor(ms));
  const days = Math.floor(ms / MS_PER_DAY);
  return {
    dateTime: {
      year: f.year,
      month: f.month,
      day: f.day,
      hours: f.hours,
      minutes: f.minutes,
      seconds: f.seconds,
    },
    // 1970-01-01 was a Thursday (4).
    dayOfWeek: ((((days + 3) % 7) + 7) % 7) + 1,
    fractions256: Math.floor((f.milliseconds * 256) / 1000),
    adjustReason,
  };
}
