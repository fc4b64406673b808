import { startStopwatch } from "../core/stopwatch.ts";
import { MS_PER_DAY, utcFields } from "../core/time.ts";

/** Where a run is: virtual time within [startMs, endMs] and what happened so far. */
export interface ProgressState {
  readonly virtualNow: number;
  readonly startMs: number;
  readonly endMs: number;
  readonly readings: number;
  readonly webhooks: number;
  readonly faults: number;
}

export interface ProgressOutput {
  write(s: string): boolean;
  isTTY?: boolean;
  /** Terminal width; a redrawn line longer than this would wrap and break the redraw. */
  columns?: number;
}

export interface ProgressOptions {
  /** Wall milliseconds since some origin, for throttling redraws; a stopwatch by default. */
  readonly wallMs?: () => number;
}

export interface Progress {
  update(state: ProgressState): void;
  /** The final state: always drawn, and the line ended. */
  done(state: ProgressState): void;
}

/** At most ten redraws per wall second: a terminal cannot show more, and each costs a write. */
const REDRAW_EVERY_MS = 100;
const BAR_WIDTH = 20;

/**
 * Progress of `rpmlab run`. On a terminal, one line redrawn in place (virtual date-time, a bar,
 * % done, readings, webhooks, faults), throttled in wall time. Elsewhere (CI logs, pipes), one
 * plain line each time the virtual clock crosses a day boundary of the run, so a log grows by
 * the scenario's length in days, not by the number of updates.
 */
export function createProgress(
  out: NodeJS.WriteStream | ProgressOutput,
  options: ProgressOptions = {},
): Progress {
  return out.isTTY === true
    ? ttyProgress(out, options.wallMs ?? startStopwatch())
    : logProgress(out);
}

function ttyProgress(out: ProgressOutput, wallMs: () => number): Progress {
  let lastDraw: number | undefined;
  const draw = (state: ProgressState) => {
    let line = ttyLine(state);
    const columns = out.columns;
    if (columns !== undefined && columns > 1 && line.length > columns - 1) {
      line = line.slice(0, columns - 1);
    }
    // \x1b[K clears what a longer previous line left to the right.
    out.write(`\r${line}\x1b[K`);
  };
  return {
    update(state) {
      const now = wallMs();
      if (lastDraw !== undefined && now - lastDraw < REDRAW_EVERY_MS) return;
      lastDraw = now;
      draw(state);
    },
    done(state) {
      draw(state);
      out.write("\n");
    },
  };
}

function logProgress(out: ProgressOutput): Progress {
  // Days of the run already written; the run's day boundaries are startMs + k days.
  let written = 0;
  // Plain functions, not methods: the caller may take them off the object.
  const update = (state: ProgressState) => {
    const crossed = Math.min(elapsedDays(state), totalDays(state));
    for (let day = written + 1; day <= crossed; day++) out.write(`${dayLine(day, state)}\n`);
    written = Math.max(written, crossed);
  };
  const done = (state: ProgressState) => {
    update(state);
    out.write(`done ${counters(state)}\n`);
  };
  return { update, done };
}

function elapsedDays(state: ProgressState): number {
  return Math.max(0, Math.floor((state.virtualNow - state.startMs) / MS_PER_DAY));
}

function totalDays(state: ProgressState): number {
  return Math.max(1, Math.ceil((state.endMs - state.startMs) / MS_PER_DAY));
}

/** "day 3/30 2026-01-08 readings 1234 webhooks 1200 faults 2" */
function dayLine(day: number, state: ProgressState): string {
  const date = isoDate(state.startMs + day * MS_PER_DAY);
  return `day ${day}/${totalDays(state)} ${date} ${counters(state)}`;
}

/** "2026-01-08 09:30 [#####---------------]  25.0% readings 1234 webhooks 1200 faults 2" */
function ttyLine(state: ProgressState): string {
  const fraction = fractionDone(state);
  const filled = Math.round(fraction * BAR_WIDTH);
  const bar = `[${"#".repeat(filled)}${"-".repeat(BAR_WIDTH - filled)}]`;
  const percent = `${(fraction * 100).toFixed(1).padStart(5)}%`;
  return `${isoDateTime(state.virtualNow)} ${bar} ${percent} ${counters(state)}`;
}

function counters(state: ProgressState): string {
  return `readings ${state.readings} webhooks ${state.webhooks} faults ${state.faults}`;
}

/** Fraction of the run's virtual time gone, 0 to 1 (1 for a run of no length). */
function fractionDone(state: ProgressState): number {
  const span = state.endMs - state.startMs;
  if (span <= 0) return 1;
  return Math.min(1, Math.max(0, (state.virtualNow - state.startMs) / span));
}

function isoDate(ms: number): string {
  const f = utcFields(ms);
  return `${f.year}-${pad(f.month)}-${pad(f.day)}`;
}

function isoDateTime(ms: number): string {
  const f = utcFields(ms);
  return `${isoDate(ms)} ${pad(f.hours)}:${pad(f.minutes)}`;
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

/**
 * `progress` plus `finish()`, which ends it with the last state it was given: the runner only
 * updates a progress, so the command that started the run ends the line (on a terminal the
 * redrawn line has no newline until then) before it prints the report.
 */
export function finishable(progress: Progress): Progress & { finish(): void } {
  let last: ProgressState | undefined;
  return {
    update(state) {
      last = state;
      progress.update(state);
    },
    done(state) {
      last = undefined;
      progress.done(state);
    },
    finish() {
      if (last !== undefined) progress.done(last);
      last = undefined;
    },
  };
}
