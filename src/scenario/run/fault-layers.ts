/** What a fault holding a target in some state sets: `value`, and null once none holds it. */
export type Apply<T> = (value: T | null) => unknown;

interface Layer {
  readonly value: unknown;
}

/**
 * Faults of one kind on one target that overlap (a 1-hour broker outage inside a 12-hour one,
 * a 503 hour inside a day the endpoint is down): each holds from its start until its own end,
 * the latest started of those still holding is in force, and the target comes back only when
 * none is left. Ending the inner fault first restores the outer one, not the normal state: `for`
 * is how long each fault lasts (README "Events").
 */
export class FaultLayers {
  private readonly layers = new Map<unknown, Layer[]>();

  /** Some fault holds `key` now. */
  holds(key: unknown): boolean {
    return this.layers.has(key);
  }

  /**
   * Puts `value` in force on `key` (applying it unless the fault in force already set the
   * same); `started` is what applying it returned. `end` takes this fault off.
   */
  hold<T>(key: unknown, value: T, apply: Apply<T>): { started: unknown; end: () => unknown } {
    let layers = this.layers.get(key);
    if (layers === undefined) {
      layers = [];
      this.layers.set(key, layers);
    }
    const own: Layer = { value };
    const inForce = layers.at(-1);
    layers.push(own);
    const started = inForce !== undefined && same(inForce.value, value) ? undefined : apply(value);
    const end = () => {
      const at = layers.indexOf(own);
      if (at < 0) return undefined;
      layers.splice(at, 1);
      // A fault started after this one is in force: it stays.
      if (at < layers.length) return undefined;
      const next = layers.at(-1);
      if (next === undefined) {
        this.layers.delete(key);
        return apply(null);
      }
      return same(next.value, value) ? undefined : apply(next.value as T);
    };
    return { started, end };
  }
}

/** Fault values are small plain data (a flag, `{kind, status}`). */
function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
