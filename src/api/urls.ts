import type { FastifyRequest } from "fastify";

/**
 * The absolute URL of a request (spec 2.6: next/previous are URLs; wire-formats: absolute).
 * With a configured base URL (scheme, host and any path prefix of a reverse proxy) that is the
 * origin; otherwise the request's Host, with the scheme from X-Forwarded-Proto (a TLS proxy in
 * front of `rpmlab serve`) or http.
 */
export function absoluteUrl(request: FastifyRequest, baseUrl?: string): URL {
  const base = baseUrl === undefined ? requestOrigin(request) : baseUrl.replace(/\/+$/, "");
  try {
    return new URL(`${base}${request.url}`);
  } catch {
    // A Host header that is no host name: links still work from the client's own base.
    return new URL(`http://localhost${request.url}`);
  }
}

function requestOrigin(request: FastifyRequest): string {
  const forwarded = header(request, "x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
  const scheme = forwarded === "https" || forwarded === "http" ? forwarded : "http";
  const host = header(request, "host") ?? "localhost";
  return `${scheme}://${host}`;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
