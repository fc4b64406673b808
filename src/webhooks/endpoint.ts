/** A webhook endpoint as the sender and the lanes use it. */
export interface Endpoint {
  /** Scheme, host and port: one connection pool and one lane each. */
  readonly origin: string;
  /** Path and query, as sent in the request line. */
  readonly path: string;
  /**
   * `user:password@` of the URL as an HTTP Basic Authorization value (RFC 7617), or null. The
   * request line never carries them (RFC 9110 §4.2.4), so they are sent as Python's requests,
   * the real service's likely client, sends them.
   */
  readonly authorization: string | null;
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
    const { origin, pathname, search, username, password } = new URL(url);
    const authorization =
      username === "" && password === ""
        ? null
        : `Basic ${Buffer.from(`${unquoted(username)}:${unquoted(password)}`).toString("base64")}`;
    return { origin, path: `${pathname}${search}`, authorization };
  } catch {
    return null;
  }
}

/**
 * Percent escapes decoded as Python's urllib.parse.unquote (what requests uses) decodes them:
 * an escape that is not valid UTF-8 or not an escape at all (`%zz`) stays as written, where
 * decodeURIComponent would throw and take the whole endpoint for an invalid URL.
 */
function unquoted(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The endpoint as the delivery log shows it: a password in the URL written as ***, so the log
 * (the admin API, the dashboard, `rpmlab webhooks deliveries`) does not hand it out — and a
 * user name without a password too, since that is how a token rides in a URL
 * (`https://<token>@host/`: Basic auth with the token as the user name and an empty password).
 */
export function loggedEndpoint(url: string): string {
  if (!url.includes("@")) return url;
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    else if (parsed.username !== "") parsed.username = "***";
    else return url;
    return parsed.href;
  } catch {
    return url;
  }
}
