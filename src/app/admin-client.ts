import type { AdminTarget } from "../config/admin-target.ts";
import { type ErrorCode, RpmlabError } from "../core/errors.ts";

/** What the lab admin API answered, by status, as the CLI reports it (src/core/errors.ts). */
const CODES: Readonly<Record<number, ErrorCode>> = {
  400: "E_API_VALIDATION",
  401: "E_API_UNAUTHENTICATED",
  403: "E_API_FORBIDDEN",
  404: "E_API_NOT_FOUND",
};

/**
 * The lab admin API (/lab/v1/) of a running `rpmlab serve`, for CLI commands that must act
 * through it (the serve owns the fulfilment timers). Errors carry the API's own words: a 400's
 * field messages, a 404's detail.
 */
export class AdminClient {
  constructor(private readonly target: AdminTarget) {}

  async get<T>(path: string, query: Record<string, string | undefined> = {}): Promise<T> {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) if (value) params.set(key, value);
    const search = params.size === 0 ? "" : `?${params.toString()}`;
    return this.call<T>("GET", `${path}${search}`);
  }

  post<T>(path: string, body: unknown): Promise<T> {
    return this.call<T>("POST", path, body);
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const url = `${this.target.baseUrl}/lab/v1/${path}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${this.target.token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      const cause = (error as Error & { cause?: { code?: string } }).cause?.code ?? "";
      throw new RpmlabError(
        "E_LAB_UNREACHABLE",
        `no rpmlab serve answers at ${this.target.baseUrl}${cause ? ` (${cause})` : ""}: start one (rpmlab serve) or give its address with --url`,
        { url: this.target.baseUrl },
        error,
      );
    }
    const text = await response.text();
    const json = parse(text);
    if (response.ok) return json as T;
    const code = CODES[response.status] ?? "E_LAB_UNREACHABLE";
    throw new RpmlabError(code, `${method} ${url}: ${response.status} ${describe(json, text)}`, {
      status: response.status,
      body: json,
    });
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** `{"detail": "…"}` as its detail; field errors as `field: message; …`. */
function describe(json: unknown, text: string): string {
  if (json === null || typeof json !== "object") return text;
  const record = json as Record<string, unknown>;
  if (typeof record.detail === "string") return record.detail;
  return Object.entries(record)
    .map(
      ([field, messages]) =>
        `${field}: ${Array.isArray(messages) ? messages.join(" ") : JSON.stringify(messages)}`,
    )
    .join("; ");
}
