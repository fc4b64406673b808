/**
 * Daily rhythms, as functions of the local hour. Clinical shape: blood pressure and heart rate
 * fall during sleep (nocturnal dip) and surge in the first hours after waking; airflow is lowest
 * on waking; glucose rises after meals and peaks an hour or two later.
 */

/** 0 awake … 1 deep asleep; ramps over the first hour of sleep and the last half hour. */
export function sleepDepth(hour: number, sleepHour: number, wakeHour: number): number {
  const sinceSleep = (hour - sleepHour + 24) % 24;
  const duration = (wakeHour - sleepHour + 24) % 24;
  if (sinceSleep >= duration) return 0;
  return Math.min(1, sinceSleep / 1, (duration - sinceSleep) / 0.5);
}

/** Hours since the patient last woke (0–24). */
export function hoursSinceWake(hour: number, wakeHour: number): number {
  return (hour - wakeHour + 24) % 24;
}

/** Rise-and-decay bump: 0 at x=0, 1 at x=peak, back near 0 after ~5 peaks (gamma-like). */
export function bump(x: number, peak: number): number {
  if (x <= 0) return 0;
  const r = x / peak;
  return r * Math.exp(1 - r);
}

/** Morning surge: peaks about an hour after waking and fades over the morning. */
export function morningSurge(sinceWake: number): number {
  return sinceWake > 8 ? 0 : bump(sinceWake, 1);
}

/** 1 on waking, fading to 0 six hours later: the morning dip of airflow. */
export function morningness(sinceWake: number): number {
  return sinceWake >= 6 ? 0 : 1 - sinceWake / 6;
}
