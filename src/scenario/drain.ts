import { MS_PER_DAY, MS_PER_HOUR } from "../core/time.ts";

/** After the last reading: time for outboxes, retries and webhooks to drain (virtual). */
export const DRAIN_MS = 2 * MS_PER_HOUR;
/** At most this long more while readings still wait in outboxes (virtual). */
export const DRAIN_LIMIT_MS = MS_PER_DAY;
