import type { Rng } from "../../core/rng.ts";
import type { EpisodeEffect, EpisodeModel } from "../patient-schema.ts";

/** One drawn episode, in days since the start of local day 0. */
interface Episode {
  readonly start: number;
  readonly peak: number;
  readonly plateauEnd: number;
  readonly end: number;
  readonly severity: number;
}

/**
 * The episodes of one kind (fluid gain, exacerbation…) over the generated period: a renewal
 * process whose gaps are drawn from `every_days`, so a 30-day run of a model with episodes
 * every 9–16 days always shows some. Drawn in time order from the model's own stream, so a
 * longer run repeats the episodes of a shorter one.
 */
export class EpisodeTrack {
  /** In order of start. */
  private readonly episodes: Episode[] = [];
  private longest = 0;

  constructor(
    readonly model: EpisodeModel,
    rng: Rng,
    horizonDays: number,
  ) {
    const [gapLow, gapHigh] = model.every_days;
    // The first episode starts within one gap of day 0, like every later one after its predecessor.
    let start = rng.uniform(0, gapLow);
    while (start < horizonDays) {
      const onset = rng.uniform(...model.onset_days);
      const plateau = rng.uniform(...model.plateau_days);
      const recovery = rng.uniform(...model.recovery_days);
      const severity = rng.uniform(...model.severity);
      const peak = start + onset;
      this.episodes.push({
        start,
        peak,
        plateauEnd: peak + plateau,
        end: peak + plateau + recovery,
        severity,
      });
      this.longest = Math.max(this.longest, peak + plateau + recovery - start);
      start += rng.uniform(gapLow, gapHigh);
    }
  }

  /** 0 outside episodes, up to the episode's severity at its plateau (days since day 0). */
  intensity(day: number): number {
    // Binary search for the last episode starting before `day`, then look back only as far as
    // the longest episode lasts: readings over ten years stay cheap.
    const list = this.episodes;
    let low = 0;
    let high = list.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (list[mid]!.start < day) low = mid + 1;
      else high = mid;
    }
    let total = 0;
    for (let i = low - 1; i >= 0; i--) {
      const e = list[i]!;
      if (e.start <= day - this.longest) break;
      if (day >= e.end) continue;
      if (day < e.peak) total += (e.severity * (day - e.start)) / (e.peak - e.start);
      else if (day <= e.plateauEnd) total += e.severity;
      else total += (e.severity * (e.end - day)) / (e.end - e.plateauEnd);
    }
    return total;
  }

  /** Start and end days of every episode, for tests and reports. */
  get spans(): ReadonlyArray<{ start: number; end: number; severity: number }> {
    return this.episodes;
  }

  effect(name: EpisodeEffect, day: number): number {
    const amount = this.model.effects[name];
    return amount === undefined || amount === 0 ? 0 : amount * this.intensity(day);
  }
}

/** Sum of one effect over every episode track of a patient. */
export function episodeEffect(tracks: readonly EpisodeTrack[], name: EpisodeEffect, day: number) {
  let total = 0;
  for (const track of tracks) total += track.effect(name, day);
  return total;
}
