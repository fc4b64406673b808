import { type Dispatcher, Pool } from "undici";
import type { LabInfo } from "../../app/lab.ts";
import { RpmlabError } from "../../core/errors.ts";

export interface ApiAnswer<T> {
  readonly status: number;
  readonly body: T;
}

/**
 * The scenario's hands on the lab: the HTTP API as an integrating platform calls it (HWI per
 * account, with that account's key) and the lab admin API (accounts, keys, MQTT credentials,
 * the delivery log). Everything a scenario does to the service goes through here.
 * Calls go through a keep-alive undici pool of the lab's origin rather than global fetch, whose
 * web streams cost a 1,000-patient enrolment about two seconds.
 */
export class LabClient {
  /** client_domain → API key, per scenario account. */
  private readonly keys = new Map<string, string>();
  private readonly pool: Pool;
  /** The path of base_url, before every call's path. */
  private readonly prefix: string;

  constructor(readonly info: LabInfo) {
    const base = new URL(info.base_url);
    this.pool = new Pool(base.origin);
    this.prefix = base.pathname.replace(/\/$/, "");
  }

  /** Closes its connections to the lab. */
  close(): Promise<void> {
    return this.pool.close();
  }

  /** Creates the account (unless it is the lab's own) and a key for it. */
  async account(clientDomain: string): Promise<void> {
    if (clientDomain === this.info.client_domain) {
      this.keys.set(clientDomain, this.info.api_key);
      return;
    }
    await this.expect(201, "POST", "/lab/v1/accounts/", { client_domain: clientDomain });
    const key = await this.expect<{ key: string }>(
      201,
      "POST",
      `/lab/v1/accounts/${clientDomain}/keys/`,
      { name: "rpmlab run" },
    );
    this.keys.set(clientDomain, key.key);
  }

  /** An HWI or ASR call as the account: `path` after /clients/{domain}, e.g. /hwi/hwi-devices/. */
  async hwi<T>(clientDomain: string, method: string, path: string, body?: unknown) {
    const key = this.keys.get(clientDomain);
    if (key === undefined) throw new RpmlabError("E_USAGE", `no key for account ${clientDomain}`);
    return this.call<T>(method, `/clients/${clientDomain}${path}`, `Api-Key ${key}`, body);
  }

  /** A lab admin call (path from /lab/v1/). */
  admin<T>(method: string, path: string, body?: unknown): Promise<ApiAnswer<T>> {
    return this.call<T>(method, path, `Bearer ${this.info.admin_token}`, body);
  }

  async credentials(role: "gateway" | "cellular", username: string) {
    return this.expect<{ username: string; password: string }>(
      201,
      "POST",
      "/lab/v1/mqtt-credentials/",
      { role, username },
    );
  }

  /** Every item of a paginated HWI list, following `next`. */
  async all<T>(clientDomain: string, path: string): Promise<T[]> {
    const out: T[] = [];
    const sep = path.includes("?") ? "&" : "?";
    for (let page = 1; ; page++) {
      const answer = await this.hwi<{ results: T[]; next: string | null }>(
        clientDomain,
        "GET",
        `${path}${sep}page=${page}&page_size=1000`,
      );
      if (answer.status !== 200) throw labFailed(`GET ${path}`, answer);
      out.push(...answer.body.results);
      if (answer.body.next === null) return out;
    }
  }

  private async expect<T>(status: number, method: string, path: string, body: unknown) {
    const answer = await this.admin<T>(method, path, body);
    if (answer.status !== status) throw labFailed(`${method} ${path}`, answer);
    return answer.body;
  }

  private async call<T>(
    method: string,
    path: string,
    authorization: string,
    body?: unknown,
  ): Promise<ApiAnswer<T>> {
    const response = await this.pool.request({
      method: method as Dispatcher.HttpMethod,
      path: `${this.prefix}${path}`,
      headers: {
        authorization,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.body.text();
    let parsed: unknown = text;
    try {
      parsed = text === "" ? null : JSON.parse(text);
    } catch {
      // Not JSON (an HTML error page from elsewhere): kept as text.
    }
    return { status: response.statusCode, body: parsed as T };
  }
}

/**
 * The lab answered a call the run needs with another status (a 500 of a store gone away while
 * the report counts readings): a part of the lab failed, not the command's usage.
 */
export function labFailed(call: string, answer: ApiAnswer<unknown>): RpmlabError {
  return new RpmlabError(
    "E_SCENARIO_FAILED",
    `${call}: ${answer.status} ${JSON.stringify(answer.body)}`,
  );
}
