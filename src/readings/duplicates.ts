import type { Rng } from "../core/rng.ts";
import type { GeneratedReading } from "./generated.ts";
import type { PhysicalReading } from "./types.ts";

/** How far back a re-sent reading may be: the last reading or one of the two before it. */
const MAX_LOOKBACK = 2;

/** A reading as emitted, with the instant it was sent (a re-sent reading goes out later). */
export interface Emission {
  readonly sentAt: number;
  readonly reading: GeneratedReading;
}

/**
 * The device's emissions: every reading once, and after a reading, with probability `rate`, a
 * re-emission of it or of one of the readings just before it, unchanged (same timestamp,
 * records and measurement_index / device_log_index; DESIGN "devices re-send"). Drawn from the
 * device's own "duplicates" stream, so the rate never changes the values.
 */
export function emissions(
  device: string,
  readings: readonly PhysicalReading[],
  rate: number,
  rng: Rng,
): Emission[] {
  const out: Emission[] = [];
  for (let i = 0; i < readings.length; i++) {
    const r = readings[i]!;
    out.push({ sentAt: r.timestamp, reading: generated(device, r, false) });
    const resend = rng.chance(rate);
    const back = rng.int(0, Math.min(MAX_LOOKBACK, i));
    if (resend)
      out.push({ sentAt: r.timestamp, reading: generated(device, readings[i - back]!, true) });
  }
  return out;
}

function generated(device: string, r: PhysicalReading, duplicate: boolean): GeneratedReading {
  return {
    device,
    timestamp: r.timestamp,
    timezone_offset: r.timezone_offset,
    records: r.records,
    duplicate,
  };
}
