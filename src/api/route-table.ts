import type { Scope } from "./types.ts";

interface KnownPath {
  readonly pattern: RegExp;
  readonly scope: Scope | null;
  readonly methods: Set<string>;
}

/**
 * Every route pattern the app serves, with its methods and scope, collected by an onRoute hook.
 * Fastify answers an unmatched method or a missing trailing slash with a plain 404; this table
 * lets the not-found handler answer as the service does instead: 301 to the slashed URL, 405
 * with an Allow header (spec 7.2, 7.3).
 */
export class KnownRoutes {
  private readonly paths = new Map<string, KnownPath>();

  add(url: string, method: string | readonly string[], scope: Scope | null): void {
    let known = this.paths.get(url);
    if (known === undefined) {
      known = { pattern: compile(url), scope, methods: new Set() };
      this.paths.set(url, known);
    }
    for (const m of typeof method === "string" ? [method] : method) known.methods.add(m);
  }

  /** The route a concrete path (no query string) matches, whatever the method. */
  match(path: string): { scope: Scope | null; allow: string[] } | undefined {
    for (const known of this.paths.values()) {
      if (known.pattern.test(path)) {
        return { scope: known.scope, allow: [...known.methods].sort(byMethodOrder) };
      }
    }
    return undefined;
  }
}

const ORDER = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

function byMethodOrder(a: string, b: string): number {
  const ia = ORDER.indexOf(a);
  const ib = ORDER.indexOf(b);
  return (ia < 0 ? ORDER.length : ia) - (ib < 0 ? ORDER.length : ib) || a.localeCompare(b);
}

/** find-my-way's syntax, enough of it: `:param` is one segment, `*` the rest. */
function compile(url: string): RegExp {
  const source = url
    .split(/(:[A-Za-z_][A-Za-z0-9_]*|\*)/)
    .map((part) => {
      if (part === "*") return ".*";
      if (part.startsWith(":")) return "[^/]+";
      return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("");
  return new RegExp(`^${source}$`);
}
