import { RpmlabError } from "../core/errors.ts";

/**
 * Per-key rate limit of the HWI/ASR API (spec 8.4: rate limiting exists, values not shown;
 * wire-formats "Auth and transport": the real service allows 1 request per second per key).
 * Off by default; `--rate-limit 1/s` mimics the real service.
 */
export interface RateLimit {
  /** Requests allowed per window. */
  readonly max: number;
  readonly windowMs: number;
}

/** What `--rate-limit 1/s` means: the real service's documented limit. */
export const REAL_SERVICE_RATE_LIMIT = "1/s";

/** Django REST framework's rate syntax ("N/period", period by its first letter: s, m, h, d). */
const PERIODS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PATTERN = /^(\d{1,9})\s*\/\s*(s|sec|second|m|min|minute|h|hour|d|day)$/i;

/**
 * Parses serve's --rate-limit, "N/s", "N/m", "N/h", "N/d" (long forms too); "off" or "none" → null
 * (no limit).
 */
export function parseRateLimit(text: string): RateLimit | null {
  const value = text.trim();
  if (/^(off|none)$/i.test(value)) return null;
  const m = PATTERN.exec(value);
  const max = m === null ? Number.NaN : Number(m[1]);
  if (m === null || !(max >= 1)) {
    throw new RpmlabError(
      "E_CONFIG_INVALID",
      `--rate-limit must be N/s, N/m, N/h or N/d with N >= 1 (e.g. ${REAL_SERVICE_RATE_LIMIT}, the real service's limit), or off; got "${text}"`,
      { field: "rate-limit", value: text },
    );
  }
  return { max, windowMs: PERIODS[m[2]!.charAt(0).toLowerCase()]! };
}

/** "1/s", "30/m": the form the README and the startup log show. */
export function formatRateLimit(limit: RateLimit | null): string {
  if (limit === null) return "off";
  const unit = Object.entries(PERIODS).find(([, ms]) => ms === limit.windowMs)?.[0];
  return unit === undefined ? `${limit.max}/${limit.windowMs}ms` : `${limit.max}/${unit}`;
}
