/** `scheme://`, in any case of letters, after any blanks: how a URL-shaped spec string starts. */
const SCHEME = /^\s*[A-Za-z][A-Za-z0-9+.-]*:\/\//;

/**
 * A URL-shaped spec string (`scheme://user:password@host…?name=value`) as messages and logs
 * show it: the password, and the value of every query parameter but those in `keep`, as ***.
 * Written for what parsing refuses too, since the error saying why quotes the spec: a scheme in
 * capitals, blanks around the spec, a `/`, `@` or `?` left unescaped in the password. The user
 * information ends at the last `@` (RFC 3986 §3.2.1 has none in the host), so an `@` in a
 * password hides more, never less. Anything else is returned as it is.
 */
export function redactUrlSpec(spec: string, keep: readonly string[] = []): string {
  const scheme = SCHEME.exec(spec);
  if (scheme === null) return spec;
  const head = scheme[0];
  let rest = spec.slice(head.length);
  const at = rest.lastIndexOf("@");
  let queryFrom = 0;
  if (at >= 0) {
    const userinfo = rest.slice(0, at);
    const colon = userinfo.indexOf(":");
    const shown = colon < 0 ? userinfo : `${userinfo.slice(0, colon)}:***`;
    rest = shown + rest.slice(at);
    queryFrom = shown.length;
  }
  const query = rest.indexOf("?", queryFrom);
  if (query < 0) return head + rest;
  // libpq and pg take `?password=…` (and sslpassword…) as the URL's own: values go, names stay.
  const values = rest
    .slice(query)
    .replace(/([?&])([^=&#]*)=([^&#]*)/g, (all: string, sep: string, name: string) =>
      keep.includes(name) ? all : `${sep}${name}=***`,
    );
  return head + rest.slice(0, query) + values;
}
