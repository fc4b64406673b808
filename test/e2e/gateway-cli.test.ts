/**
 * `rpmlab gateway --broker … --ble direct` as a user runs it against `rpmlab serve`, both child
 * processes from bin/rpmlab: devices activated on a gateway id through the HWI API show up as
 * virtual devices of the gateway, their readings reach the API, and the whitelist is confirmed.
 * Every wait has a deadline; nothing sleeps.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connectAsync } from "mqtt";
import { afterEach, describe, expect, it } from "vitest";
import { within } from "../ble/support/lab.ts";
import { runToExit } from "./cli-process.ts";
import { type Served, startServe } from "./serve-process.ts";
import { silentBroker } from "./silent-broker.ts";

const BIN = fileURLToPath(new URL("../../bin/rpmlab", import.meta.url));
const GW = "0A1B2C3D4E5F";

describe("rpmlab gateway --broker against rpmlab serve", () => {
  let served: Served | undefined;
  let gateway: ChildProcess | undefined;

  afterEach(async () => {
    if (gateway !== undefined && gateway.exitCode === null) {
      gateway.kill("SIGTERM");
      await once(gateway, "exit");
    }
    await served?.stop();
  }, 30_000);

  it("relays the readings of the devices the service whitelists on it", async () => {
    served = await startServe(["--store", "memory", "--broker", "embedded:0", "--port", "0"]);
    const { base_url, client_domain, api_key, admin_token, mqtt_url } = served.info;
    const hwi = async <T>(method: string, path: string, body?: unknown) => {
      const response = await fetch(`${base_url}/clients/${client_domain}/hwi/${path}`, {
        method,
        headers: {
          authorization: `Api-Key ${api_key}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: (await response.json()) as T };
    };
    const bpm = await hwi<{ id: string }>("POST", "hwi-devices/", {
      device: { name: "Vendor BPM - S", hardware_uuid: GW },
      patient: { external_id: "CLI-1" },
    });
    expect(bpm.status).toBe(201);

    gateway = spawn(
      process.execPath,
      [
        BIN,
        "gateway",
        "--broker",
        mqtt_url,
        "--gateway-uuid",
        GW,
        "--url",
        base_url,
        "--admin-token",
        admin_token,
        "--ble",
        "direct",
        "--every",
        "1",
        "--linger",
        "0",
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let err = "";
    gateway.stderr!.on("data", (chunk: Buffer) => {
      err += chunk.toString();
    });
    const events: Record<string, unknown>[] = [];
    let buffer = "";
    const sent = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `no reading sent within 30 s; events ${JSON.stringify(events)}; stderr:\n${err}`,
            ),
          ),
        30_000,
      );
      gateway!.stdout!.on("data", (chunk: Buffer) => {
        buffer += chunk.toString();
        const lines = buffer.split("\n");
        buffer = lines.pop()!;
        for (const line of lines) {
          const event = JSON.parse(line) as Record<string, unknown>;
          events.push(event);
          if (event.event === "sent") {
            clearTimeout(timer);
            resolve();
          }
        }
      });
      gateway!.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`rpmlab gateway exited with ${code}; stderr:\n${err}`));
      });
    });
    await sent;
    expect(events).toContainEqual(
      expect.objectContaining({ event: "started", gateway_uuid: GW, ble: "direct" }),
    );
    expect(events).toContainEqual(
      expect.objectContaining({ event: "device", profile: "Vendor BPM - S" }),
    );

    // The PUBACK of the embedded broker means committed: the reading is in the API now.
    const stored = await hwi<{ metric: string; hardware_uuid: string }[]>(
      "GET",
      `hwi-devices/${bpm.body.id}/measurements/`,
    );
    expect(stored.body.map((r) => r.metric)).toEqual(
      expect.arrayContaining(["blood_pressure", "pulse", "battery_percentage"]),
    );
    expect(stored.body.every((r) => r.hardware_uuid === GW)).toBe(true);
    const info = await hwi<{ whitelisted_devices: { whitelist_status: string }[] }>(
      "GET",
      `gateway-info/${GW}/`,
    );
    expect(info.body.whitelisted_devices.map((d) => d.whitelist_status)).toEqual(["CO"]);

    gateway.kill("SIGTERM");
    const [code] = await once(gateway, "exit");
    expect(code).toBe(0);
  }, 60_000);
  it("restarted on its state (--outbox), relays the readings its devices take next", async () => {
    served = await startServe(["--store", "memory", "--broker", "embedded:0", "--port", "0"]);
    const { base_url, client_domain, api_key, admin_token, mqtt_url } = served.info;
    const activated = await fetch(`${base_url}/clients/${client_domain}/hwi/hwi-devices/`, {
      method: "POST",
      headers: { authorization: `Api-Key ${api_key}`, "content-type": "application/json" },
      body: JSON.stringify({
        device: { name: "Vendor Glucometer", hardware_uuid: GW },
        patient: { external_id: "CLI-2" },
      }),
    });
    expect(activated.status).toBe(201);
    const dir = mkdtempSync(join(tmpdir(), "rpmlab-gateway-restart-"));
    const args = [
      ...["gateway", "--broker", mqtt_url, "--gateway-uuid", GW, "--url", base_url],
      ...["--admin-token", admin_token, "--ble", "direct", "--every", "1", "--linger", "0"],
      ...["--outbox", dir],
    ];
    /** Runs the gateway until `enough` says so on its events, then stops it (SIGTERM). */
    const runUntil = async (enough: (events: Record<string, unknown>[]) => boolean) => {
      const child = spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "pipe", "pipe"] });
      gateway = child;
      const events: Record<string, unknown>[] = [];
      let buffer = "";
      let err = "";
      child.stderr!.on("data", (c: Buffer) => {
        err += c.toString();
      });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`not done in 30 s: ${JSON.stringify(events)}\n${err}`)),
          30_000,
        );
        child.stdout!.on("data", (chunk: Buffer) => {
          buffer += chunk.toString();
          const lines = buffer.split("\n");
          buffer = lines.pop()!;
          for (const line of lines) events.push(JSON.parse(line) as Record<string, unknown>);
          if (enough(events)) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      child.kill("SIGTERM");
      expect((await once(child, "exit"))[0]).toBe(0);
      return events;
    };
    const sessionsWithRecords = (events: Record<string, unknown>[]) =>
      events.filter(
        (e) => e.event === "session" && ((e.result as { stored?: number } | null)?.stored ?? 0) > 0,
      );
    try {
      await runUntil((events) => sessionsWithRecords(events).length >= 3);
      // The meter's counter goes on across the restart, where the gateway's RACP request starts:
      // its first session finds the reading taken. (It restarted at 1: "no records found" for
      // as many readings as the first run relayed.)
      const again = await runUntil((events) => events.some((e) => e.event === "session"));
      const first = again.find((e) => e.event === "session")!;
      expect(first.result).toMatchObject({ racp: "success" });
      expect((first.result as { stored: number }).stored).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);

  it("refuses --ble direct without a broker, a username that is not the gateway, a bad gateway uuid", async () => {
    for (const [args, why] of [
      [["--ble", "direct", "--sensor-code", "10"], "--ble direct needs --broker"],
      [
        [
          "--broker",
          "mqtt://127.0.0.1:1",
          "--gateway-uuid",
          GW,
          "--username",
          "FFFFFFFFFFFF",
          "--password",
          "x",
        ],
        "--username is the gateway uuid",
      ],
      [["--broker", "embedded:0"], "--broker takes the URL of a running broker"],
      [
        ["--broker", "mqtt://127.0.0.1:1", "--gateway-uuid", "XYZ"],
        '--gateway-uuid must be 12 hex digits (hyphens allowed), got "XYZ"',
      ],
    ] as const) {
      const child = spawn(process.execPath, [BIN, "gateway", ...args], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let err = "";
      child.stderr!.on("data", (c: Buffer) => {
        err += c.toString();
      });
      const [code] = (await once(child, "exit")) as [number];
      expect(code, err).toBe(2);
      expect(err).toContain("E_USAGE");
      expect(err).toContain(why);
    }
  }, 60_000);

  it("a bad --outbox fails before the serve is asked for credentials: the gateway's password stands", async () => {
    served = await startServe(["--store", "memory", "--broker", "embedded:0", "--port", "0"]);
    const { base_url, admin_token, mqtt_url } = served.info;
    const issued = await fetch(`${base_url}/lab/v1/mqtt-credentials/`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${admin_token}` },
      body: JSON.stringify({ role: "gateway", username: GW }),
    });
    expect(issued.status).toBe(201);
    const { password } = (await issued.json()) as { password: string };
    const dir = mkdtempSync(join(tmpdir(), "rpmlab-gateway-bad-outbox-"));
    try {
      // A file where the outbox directory would go.
      writeFileSync(join(dir, "taken"), "");
      const { code, err } = await runToExit([
        ...["gateway", "--broker", mqtt_url, "--gateway-uuid", GW, "--ble", "direct"],
        ...["--url", base_url, "--admin-token", admin_token],
        ...["--outbox", join(dir, "taken", "outbox")],
      ]);
      expect(err).toContain("E_OUTBOX_UNAVAILABLE");
      expect(code).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const gatewayClient = await connectAsync(mqtt_url, {
      clientId: GW,
      username: GW,
      password,
      reconnectPeriod: 0,
    });
    await gatewayClient.endAsync();
  }, 60_000);
});

describe("rpmlab gateway --broker: stopped while it connects", () => {
  it("a broker that takes the connection and never answers: SIGINT ends it at once, exit 0", async () => {
    const silent = await silentBroker();
    try {
      const { code, err } = await runToExit(
        [
          ...["gateway", "--broker", silent.url, "--gateway-uuid", GW],
          ...["--username", GW, "--password", "not-checked", "--ble", "direct"],
        ],
        40_000,
        async (child) => {
          await within(
            30_000,
            "the gateway's CONNECT",
            (done) => void silent.connecting.then(done),
          );
          const exited = once(child, "exit");
          child.kill("SIGINT");
          // MQTT.js gives up on the CONNACK after 10 s (then exit 1, E_BROKER_UNAVAILABLE): the
          // deadline is well inside it.
          await within(5_000, "the gateway to exit on SIGINT", (done) => void exited.then(done));
        },
      );
      expect(code, err).toBe(0);
      expect(err).not.toContain("E_BROKER_UNAVAILABLE");
    } finally {
      await silent.close();
    }
  });
});
