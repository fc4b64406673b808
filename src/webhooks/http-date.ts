/**
 * RFC 9110 §5.6.7 HTTP-date, as a webhook endpoint's Retry-After and Date carry it: a recipient
 * must accept the IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) and the obsolete RFC 850
 * (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`) forms, every one
 * of them GMT (`UTC` and `+0000` are taken for it too). Date.parse is no such reader: it takes
 * asctime's zoneless time in the machine's own time zone, and makes a date of anything it can
 * (`1.5` is January 2001).
 */
const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const TIME = String.raw`(\d{2}):(\d{2}):(\d{2})`;
/** GMT, or what servers that are not quite RFC 9110's write for it. */
const GMT = "(?:GMT|UTC|[+-]0000)";
const IMF_FIXDATE = new RegExp(
  String.raw`^[a-z]{3}, (\d{2}) ([a-z]{3}) (\d{4}) ${TIME} ${GMT}$`,
  "i",
);
const RFC850_DATE = new RegExp(
  String.raw`^[a-z]{6,9}, (\d{2})-([a-z]{3})-(\d{2}) ${TIME} ${GMT}$`,
  "i",
);
const ASCTIME_DATE = new RegExp(String.raw`^[a-z]{3} ([a-z]{3}) ([ \d]\d) ${TIME} (\d{4})$`, "i");

/**
 * The time an HTTP-date names, in ms, or NaN when it is none. `nowMs` places an RFC 850 date's
 * two-digit year: one that would be more than 50 years ahead is the century before (§5.6.7).
 */
export function parseHttpDate(value: string, nowMs: number): number {
  let m = IMF_FIXDATE.exec(value);
  if (m !== null) return at(Number(m[3]), m[2]!, m[1]!, m.slice(4, 7));
  m = ASCTIME_DATE.exec(value);
  if (m !== null) return at(Number(m[6]), m[1]!, m[2]!.trim(), m.slice(3, 6));
  m = RFC850_DATE.exec(value);
  if (m === null) return Number.NaN;
  const thisYear = new Date(nowMs).getUTCFullYear();
  let year = thisYear - (thisYear % 100) + Number(m[3]);
  if (year - thisYear > 50) year -= 100;
  return at(year, m[2]!, m[1]!, m.slice(4, 7));
}

function at(year: number, month: string, day: string, time: readonly string[]): number {
  const monthIndex = MONTHS.indexOf(month.toLowerCase());
  const [h, min, s] = time.map(Number) as [number, number, number];
  const d = Number(day);
  // A leap second (60) is allowed by the grammar; Date.UTC rolls it into the next minute.
  if (monthIndex < 0 || d < 1 || d > 31 || h > 23 || min > 59 || s > 60) return Number.NaN;
  return Date.UTC(year, monthIndex, d, h, min, s);
}
