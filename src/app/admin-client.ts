import type { AdminTarget } from "../config/admin-target.ts";
import { type ErrorCode, RpmlabError } from "../core/errors.ts";

/** What the lab admin API answered, by status, as the CLI reports it (src/core/errors.ts). */
const CODES: Readonly<Record<number, ErrorCode>> = {
  400: "E_API_VALIDATION",
  403: "E_API_FORBIDDEN",
  404: "E_API_NOT_FOUND",
};

/** Rows a page when list() walks a list: the most the API gives (MAX_PAGE_SIZE). */
const LIST_PAGE_SIZE = 1000;

/**
 * The lab admin API (/lab/v1/) of a running `rpmlab serve`, for CLI commands that must act
 * through it (the serve owns the fulfilment timers). Errors carry the API's own words: a 400's
 * field messages, a 404's detail.
 */
export class AdminClient {
  constructor(private readonly target: AdminTarget) {}

  /**
   * `query` holds the command's options of the same names (`--month` is `month`): a 400 about
   * them only is a usage error (E_CONFIG_INVALID, exit 2) naming the options, not the API's
   * fields.
   */
  async get<T>(path: string, query: Record<string, string | undefined> = {}): Promise<T> {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) if (value) params.set(key, value);
    const search = params.size === 0 ? "" : `?${params.toString()}`;
    try {
      return await this.call<T>("GET", `${path}${search}`);
    } catch (error) {
      throw asOptionError(error, params) ?? error;
    }
  }

  /**
   * Every row of a list endpoint, page by page (the flat form stops at 1,000 rows: spec 8 rule
   * 1), in the list's order. `query` as for get().
   */
  async list<T>(path: string, query: Record<string, string | undefined> = {}): Promise<T[]> {
    const rows: T[] = [];
    for (let page = 1; ; page++) {
      const envelope = await this.get<{ next: string | null; results: T[] }>(path, {
        ...query,
        page: String(page),
        page_size: String(LIST_PAGE_SIZE),
      });
      rows.push(...envelope.results);
      if (envelope.next === null) return rows;
    }
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
    if (response.status === 204) return undefined as T;
    const json = parse(text);
    if (!isLabAnswer(response, json)) throw notTheLab(this.target.baseUrl, method, url, response);
    if (response.ok) return json as T;
    if (response.status === 401) throw refusedToken(this.target, json, text);
    const code = CODES[response.status] ?? "E_LAB_UNREACHABLE";
    throw new RpmlabError(code, `${method} ${url}: ${response.status} ${describe(json, text)}`, {
      status: response.status,
      body: json,
    });
  }
}

/** A 400 whose every field is one of `params`, as the command-line options they came from. */
function asOptionError(error: unknown, params: URLSearchParams): RpmlabError | undefined {
  if (!(error instanceof RpmlabError) || error.code !== "E_API_VALIDATION") return undefined;
  const body = error.details.body;
  if (body === null || typeof body !== "object" || Array.isArray(body)) return undefined;
  const fields = Object.keys(body);
  if (fields.length === 0 || !fields.every((field) => params.has(field))) return undefined;
  const option = (field: string) => `--${field.replaceAll("_", "-")}`;
  return new RpmlabError(
    "E_CONFIG_INVALID",
    fields
      .map((field) => {
        const messages = messagesOf((body as Record<string, unknown>)[field]);
        return `${option(field)}: ${messages}`;
      })
      .join("; "),
    { field: fields[0]!.replaceAll("_", "-"), value: params.get(fields[0]!) },
    error,
  );
}

/**
 * The lab admin API answers JSON, errors included (`{"detail": …}`): anything else comes from
 * another server at that address (a Django dev server on 8000, serve's default port too, a
 * proxy's error page), whose page would say nothing useful as an error message.
 */
function isLabAnswer(response: Response, json: unknown): boolean {
  const type = response.headers.get("content-type") ?? "";
  return /^application\/json\b/i.test(type) && json !== null && typeof json === "object";
}

function notTheLab(baseUrl: string, method: string, url: string, response: Response): RpmlabError {
  const type = response.headers.get("content-type")?.split(";")[0]?.trim() || "no content type";
  return new RpmlabError(
    "E_LAB_UNREACHABLE",
    `what answers at ${baseUrl} is not an rpmlab serve (${method} ${new URL(url).pathname} answered ${response.status} ${type}, not the lab admin API's JSON): give the base URL rpmlab serve printed with --url`,
    { url: baseUrl, status: response.status, content_type: type },
  );
}

/**
 * The admin API answers 401 to one thing only, a token that is not the serve's: the error names
 * where the command took it from, the part of the command line (or environment) to fix.
 */
function refusedToken(target: AdminTarget, json: unknown, text: string): RpmlabError {
  const source = target.tokenSource ?? "--admin-token";
  return new RpmlabError(
    "E_API_UNAUTHENTICATED",
    `the rpmlab serve at ${target.baseUrl} refused the admin token of ${source} (401 ${describe(json, text)}): give the admin token it printed at start`,
    { status: 401, field: "admin-token", source },
  );
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
    .map(([field, messages]) => `${field}: ${messagesOf(messages)}`)
    .join("; ");
}

/** A field's DRF messages (a list of strings) as one line. */
function messagesOf(messages: unknown): string {
  return Array.isArray(messages) ? messages.join(" ") : JSON.stringify(messages);
}
