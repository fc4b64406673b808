import { DURATION_TEXT, parseDuration } from "../config/duration.ts";
import { MS_PER_DAY, MS_PER_HOUR, MS_PER_MINUTE } from "../core/time.ts";

/**
 * When an event happens (`at:`), in one of two readable forms:
 * - a calendar form, `[Nd] [HH:MM[:SS]]`: day N counted from the UTC day of clock.start (day 0),
 *   at that UTC time of day: `2d 09:30`, `09:30` (day 0), `2d` (day 2 at 00:00);
 * - an offset from clock.start itself, as a duration that is not a whole number of days:
 *   `36h`, `90m`, `1.5d`, `45s`.
 * The calendar form needs clock.start to become an offset, so parsing and resolving are apart.
 */
export type AtTime =
  | { readonly kind: "calendar"; readonly day: number; readonly timeOfDayMs: number }
  | { readonly kind: "offset"; readonly ms: number };

const CALENDAR = /^(?:(\d+)d)?\s*(?:(\d{2}):(\d{2})(?::(\d{2}))?)?$/;
const WHOLE_DAYS = /^\d+d$/;
/** Both forms in one pattern, for schemas (JSON Schema `pattern`): parseAt has the last word. */
export const AT_PATTERN = new RegExp(
  String.raw`^\s*(?:\d+d(?:\s*\d{2}:\d{2}(?::\d{2})?)?|\d{2}:\d{2}(?::\d{2})?|${DURATION_TEXT})\s*$`,
);

export const AT_HELP =
  'expected "Nd HH:MM" (day N after the start day, UTC time), "HH:MM", "Nd", or an offset from clock.start such as "36h" or "90m"';

/** undefined when the text is in neither form. */
export function parseAt(text: string): AtTime | undefined {
  const trimmed = text.trim();
  if (trimmed === "") return undefined;
  const calendar = CALENDAR.exec(trimmed);
  if (calendar !== null && (WHOLE_DAYS.test(trimmed) || calendar[2] !== undefined)) {
    const [hours, minutes, seconds] = [calendar[2], calendar[3], calendar[4]].map((p) =>
      Number(p ?? 0),
    ) as [number, number, number];
    if (hours > 23 || minutes > 59 || seconds > 59) return undefined;
    return {
      kind: "calendar",
      day: Number(calendar[1] ?? 0),
      timeOfDayMs: hours * MS_PER_HOUR + minutes * MS_PER_MINUTE + seconds * 1000,
    };
  }
  // "2 d" would be a duration, but read as an offset it would differ from the calendar "2d".
  if (/\s/.test(trimmed)) return undefined;
  const ms = parseDuration(trimmed);
  return ms === undefined ? undefined : { kind: "offset", ms };
}

/** Milliseconds after clock.start; negative when a calendar time falls before the start. */
export function resolveAt(at: AtTime, startMs: number): number {
  if (at.kind === "offset") return at.ms;
  const startOfDay = Math.floor(startMs / MS_PER_DAY) * MS_PER_DAY;
  return startOfDay + at.day * MS_PER_DAY + at.timeOfDayMs - startMs;
}
