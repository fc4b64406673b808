import { MS_PER_DAY } from "../core/time.ts";

/**
 * Warehouse time: "1–2 business days to ship" counts Monday to Friday only (UTC days; the lab
 * keeps no holiday calendar). `ms` of business time are added to `start`; time that falls on a
 * Saturday or Sunday does not count, so a request made on Friday evening ships on Monday or
 * Tuesday.
 */
export function addBusinessTime(start: number, ms: number): number {
  let t = skipWeekend(start);
  let remaining = ms;
  while (remaining > 0) {
    const dayEnd = (Math.floor(t / MS_PER_DAY) + 1) * MS_PER_DAY;
    const chunk = Math.min(remaining, dayEnd - t);
    t += chunk;
    remaining -= chunk;
    if (remaining > 0) t = skipWeekend(dayEnd);
  }
  // Work that ends with Friday ends at Saturday 00:00: the next business day starts Monday.
  return skipWeekend(t);
}

/** 0 = Sunday … 6 = Saturday; 1970-01-01 was a Thursday. */
export function utcWeekday(ms: number): number {
  return (((Math.floor(ms / MS_PER_DAY) + 4) % 7) + 7) % 7;
}

/** `t`, or midnight of the next Monday when `t` falls on a weekend. */
function skipWeekend(t: number): number {
  const day = utcWeekday(t);
  if (day !== 0 && day !== 6) return t;
  const midnight = Math.floor(t / MS_PER_DAY) * MS_PER_DAY;
  return midnight + (day === 6 ? 2 : 1) * MS_PER_DAY;
}
