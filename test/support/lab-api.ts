import type { LabInfo } from "../../src/app/lab.ts";

/**
 * The HTTP side of a running lab as a drill sees it: HWI calls with the lab's API key and MQTT
 * credentials from the admin API. The same for `rpmlab serve` in this process (ServeLab) or in a
 * child process (its `--json` line).
 */
export class LabApi {
  constructor(readonly info: LabInfo) {}

  /** An HWI call; the body parsed as JSON. */
  async hwi<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const { base_url, client_domain, api_key } = this.info;
    const response = await fetch(`${base_url}/clients/${client_domain}/hwi/${path}`, {
      method,
      headers: {
        authorization: `Api-Key ${api_key}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: (text === "" ? null : JSON.parse(text)) as T };
  }

  /** MQTT credentials for a gateway or a direct-cellular device (README "rpmlab serve"). */
  async credentials(
    role: "gateway" | "cellular",
    username: string,
  ): Promise<{ username: string; password: string }> {
    const response = await fetch(`${this.info.base_url}/lab/v1/mqtt-credentials/`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${this.info.admin_token}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ role, username }),
    });
    if (response.status !== 201) throw new Error(`credentials: ${await response.text()}`);
    return (await response.json()) as { username: string; password: string };
  }
}
