import type { TypedEvents } from "../../core/events.ts";
import type { IngestEvents } from "../../ingest/events.ts";
import type { DeadLetterCounts } from "../report.ts";

/** Reasons a report lists (the most frequent first): enough to say what went wrong. */
const REASONS = 5;

/**
 * The messages ingestion kept as dead letters during a run, by reason (README "Ingestion"):
 * readings that never reach the API show up in the report as `missing`, and this says why.
 */
export class DeadLetterTally {
  private readonly byReason = new Map<string, number>();
  private count = 0;
  private readonly off: () => void;

  constructor(events: TypedEvents<IngestEvents>) {
    this.off = events.on("dead_letter", ({ row }) => {
      this.count++;
      this.byReason.set(row.reason, (this.byReason.get(row.reason) ?? 0) + 1);
    });
  }

  counts(): DeadLetterCounts {
    const reasons = [...this.byReason]
      .map(([reason, count]) => ({ reason, count }))
      // Most frequent first; equal counts in the reasons' order, so a report is reproducible.
      .sort((a, b) => b.count - a.count || (a.reason < b.reason ? -1 : a.reason > b.reason ? 1 : 0))
      .slice(0, REASONS);
    return { count: this.count, reasons };
  }

  close(): void {
    this.off();
  }
}
