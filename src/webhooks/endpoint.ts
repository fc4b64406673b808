/** A webhook endpoint as the sender and the lanes use it. */
export interface Endpoint {
  /** Scheme, host and port: one connection pool and one lane each. */
  readonly origin: string;
  /** Path and query, as sent in the request line. */
  readonly path: string;
}

/** Distinct endpoints kept parsed; a lab has a handful, and the map starts over past this. */
const KEPT = 1024;
const parsed = new Map<string, Endpoint | null>();

/**
 * The endpoint URL parsed once, not at every attempt: WHATWG URL parsing cost about as much
 * as the dispatcher's own work per delivery (test/bench/webhooks.ts profile, 2026-11-27). Null
 * when it is not a valid URL.
 */
export function endpointOf(url: string): Endpoint | null {
  let endpoint = parsed.get(url);
  if (endpoint === undefined) {
    endpoint = parse(url);
    if (parsed.size >= KEPT) parsed.clear();
    parsed.set(url, endpoint);
  }
  return endpoint;
}

function parse(url: string): Endpoint | null {
  try {
    const { origin, pathname, search } = new URL(url);
    return { origin, path: `${pathname}${search}` };
  } catch {
    return null;
  }
}
