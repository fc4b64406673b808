import type { Rng } from "../../core/rng.ts";

/**
 * A slowly varying daily offset: a first-order autoregressive series with standard deviation
 * `sd` and day-to-day correlation `phi`, drawn in day order so a longer run extends a shorter one.
 */
export function dailySeries(rng: Rng, days: number, sd: number, phi: number): Float64Array {
  const out = new Float64Array(days);
  const innovation = Math.sqrt(1 - phi * phi);
  let x = rng.normal();
  for (let d = 0; d < days; d++) {
    if (d > 0) x = phi * x + innovation * rng.normal();
    out[d] = sd * x;
  }
  return out;
}

/** The series' value on a day, holding the ends for days outside the drawn range. */
export function at(series: Float64Array, day: number): number {
  const i = day < 0 ? 0 : day >= series.length ? series.length - 1 : day;
  return series[i]!;
}
