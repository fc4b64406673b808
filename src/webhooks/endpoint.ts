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
  /**
   * The credentials the URL carries, as written and decoded: what loggedEndpoint shows as ***
   * (the password, else a user name alone, and secret-named query values), for masking them
   * wherever else they turn up in the log (an echoing receiver's answer, an error quoting the URL).
   */
  readonly secrets: readonly string[];
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
    const secrets: string[] = [];
    const user = password !== "" ? password : username;
    if (user !== "") secrets.push(user, unquoted(user));
    for (const pair of search.slice(1).split("&")) {
      const eq = pair.indexOf("=");
      if (eq < 0 || !secretQueryName(pair.slice(0, eq))) continue;
      const value = pair.slice(eq + 1);
      secrets.push(value, unquoted(value.replaceAll("+", " ")));
    }
    return { origin, path: `${pathname}${search}`, authorization, secrets };
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
 * (`https://<token>@host/`: Basic auth with the token as the user name and an empty password) —
 * and so is the value of a query parameter whose name says it is a secret (secretQueryName).
 * Idempotent: what it returns, given again, comes back unchanged.
 */
export function loggedEndpoint(url: string): string {
  return maskedQuery(maskedUserinfo(url));
}

function maskedUserinfo(url: string): string {
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

/**
 * Words of a query parameter's name that mark its value as a credential, as receivers take them:
 * `?token=`, `?key=`/`?api_key=` (Google, Zapier), `?secret=`, `?sig=`/`?signature=` (pre-signed
 * URLs, Azure SAS), `?code=` (Azure Functions' function key), `?auth=`, `?password=`/`?pass=`.
 */
const SECRET_WORDS: ReadonlySet<string> = new Set([
  "token",
  "key",
  "apikey",
  "secret",
  "signature",
  "sig",
  "password",
  "pass",
  "auth",
  "code",
]);

/**
 * A name (percent escapes and `+` decoded) that is, or has as a word, one of SECRET_WORDS, in any
 * case: words split at anything but letters and digits and at a lower-to-upper change, so
 * `access_token`, `X-Api-Key`, `clientSecret` and `X-Amz-Signature` are secrets, `monkey` is not.
 * Masking a harmless value costs the reader little; showing a token hands it out.
 */
export function secretQueryName(name: string): boolean {
  const decoded = unquoted(name.replaceAll("+", " "));
  const words = decoded
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  return (
    SECRET_WORDS.has(decoded.toLowerCase().replace(/[^a-z0-9]/g, "")) ||
    words.some((w) => SECRET_WORDS.has(w))
  );
}

/**
 * The query (from `?` to `#` or the end) with each secret-named parameter's value as ***, its
 * name and every other parameter as written: the log still tells which endpoint it was.
 */
function maskedQuery(url: string): string {
  const start = url.indexOf("?");
  if (start < 0) return url;
  const hash = url.indexOf("#", start);
  const end = hash < 0 ? url.length : hash;
  const query = url
    .slice(start + 1, end)
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      if (eq < 0 || eq === pair.length - 1) return pair;
      const name = pair.slice(0, eq);
      return secretQueryName(name) ? `${name}=***` : pair;
    })
    .join("&");
  return `${url.slice(0, start + 1)}${query}${url.slice(end)}`;
}
