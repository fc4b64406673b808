/** Every 15 minutes; the service reads the signal as stale after an hour (fulfilment/gateways.ts). */
export const CHECKIN_EVERY_MS = 15 * 60_000;

/**
 * The check-in periods the lab offers (a scenario cohort's `checkin_every`, `rpmlab gateway
 * --checkin-every`): a minute to an hour. Longer would leave the gateway reported with signal 0
 * between check-ins, since the service calls a check-in recent for an hour.
 */
const CHECKIN_EVERY_RANGE_MS = { min: 60_000, max: 3_600_000 } as const;

/** Whether `ms` is a check-in period the lab offers. */
export function inCheckinRange(ms: number): boolean {
  return ms >= CHECKIN_EVERY_RANGE_MS.min && ms <= CHECKIN_EVERY_RANGE_MS.max;
}
