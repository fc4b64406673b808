/**
 * Text from outside the lab (an endpoint's answer, a device's topic or payload, a scenario's own
 * words) as a terminal is shown it: every control character — C0, DEL and C1 (U+0080–U+009F,
 * which terminals also act on: U+009B is a one-character CSI) — as a \u escape, so it can neither
 * drive the terminal of whoever reads it nor break a table's columns. `keepTabs` leaves tabs in
 * text shown as a block (a payload's lines).
 */
export function printable(text: string, keepTabs = false): string {
  return text.replace(/\p{Cc}/gu, (c) =>
    keepTabs && c === "\t" ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
