/**
 * Work a component starts from its own clock timers (a shipment's transition, a supply order's
 * step, an hourly sweep). A virtual clock driver (src/scenario) waits for it after each event:
 * on PostgreSQL, or any store that answers after a network round trip, the work would otherwise
 * commit after the clock had moved on, stamped with a later time than its timer's.
 */
export interface TimedWork {
  /** Some of that work is under way. */
  readonly busy: boolean;
  /** Resolves once none is under way (that work's own follow-ups included). */
  whenIdle(): Promise<unknown>;
}

/** Resolves once none of `parts` is busy; undefined when none is (nothing to wait for). */
export function whenAllIdle(parts: readonly TimedWork[]): Promise<void> | undefined {
  if (!parts.some((p) => p.busy)) return undefined;
  return (async () => {
    while (parts.some((p) => p.busy)) await Promise.all(parts.map((p) => p.whenIdle()));
  })();
}
