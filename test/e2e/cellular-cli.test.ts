/**
 * Issue 6 §4 as a user runs it, two processes: `rpmlab serve` (embedded broker), a cellular
 * BPM activated on its IMEI through the HWI API, then `rpmlab device "Vendor Cellular BPM"
 * --broker <serve's mqtt_url> --url … --admin-token …` (credentials issued by the serve) at
 * full speed; every reading it took is read back from the API once.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Aedes } from "aedes";
import { connectAsync } from "mqtt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { within } from "../ble/support/lab.ts";
import { BIN, runToExit } from "./cli-process.ts";
import { type Served, startServe } from "./serve-process.ts";
import { silentBroker } from "./silent-broker.ts";

const IMEI = "352099001761481";

describe("rpmlab device <cellular type> against rpmlab serve", () => {
  let served: Served | undefined;

  beforeAll(async () => {
    served = await startServe(["--store", "memory", "--port", "0", "--broker", "embedded:0"]);
  });
  afterAll(async () => {
    if (served !== undefined) expect(await served.stop()).toBe(0);
  });

  const hwi = async (path: string, body?: unknown) => {
    const { base_url, api_key, client_domain } = served!.info;
    const response = await fetch(`${base_url}/clients/${client_domain}/hwi/${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { "content-type": "application/json", authorization: `Api-Key ${api_key}` },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as unknown };
  };

  it("sends its readings with credentials the serve issues; the API holds each once", async () => {
    const activated = await hwi("hwi-devices/", {
      device: { name: "Vendor Cellular BPM", hardware_uuid: IMEI },
      patient: { external_id: "CELL-E2E" },
    });
    expect(activated.status).toBe(201);
    const deviceId = (activated.body as { id: string }).id;

    const { mqtt_url, base_url, admin_token } = served!.info;
    const { code, out, err } = await runToExit([
      "device",
      "Vendor Cellular BPM",
      ...["--broker", mqtt_url, "--imei", IMEI],
      ...["--url", base_url, "--admin-token", admin_token],
      // From the next whole minute (the default): readings before the activation would
      // belong to no one the API shows.
      ...["--days", "3", "--speed", "max"],
      ...["--duplicate-rate", "0.3", "--json"],
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    const events = out
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const readings = events.filter((e) => e.event === "reading");
    const originals = readings.filter((e) => e.duplicate === false);
    expect(originals.length).toBeGreaterThan(3);
    expect(readings.length).toBeGreaterThan(originals.length);
    expect(events.at(-1)).toMatchObject({
      event: "summary",
      taken: originals.length,
      sent: readings.length,
      queued: 0,
    });

    // Acknowledged means committed (the serve's ingestion acknowledges after the commit).
    const stored = await hwi(`hwi-devices/${deviceId}/measurements/`);
    expect(stored.status).toBe(200);
    const records = stored.body as { metric: string; timestamp: string; hardware_uuid: string }[];
    const expected = originals.flatMap((r) => r.records as unknown[]);
    expect(records).toHaveLength(expected.length);
    const keys = records.map((r) => `${r.timestamp}/${r.metric}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(records.every((r) => r.hardware_uuid === IMEI)).toBe(true);
  });

  it("a bad --outbox fails before the serve is asked for credentials: the IMEI's password stands", async () => {
    const { mqtt_url, base_url, admin_token } = served!.info;
    const imei = "352099001761499";
    const issued = await fetch(`${base_url}/lab/v1/mqtt-credentials/`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${admin_token}` },
      body: JSON.stringify({ role: "cellular", username: imei }),
    });
    expect(issued.status).toBe(201);
    const { password } = (await issued.json()) as { password: string };
    const dir = mkdtempSync(join(tmpdir(), "rpmlab-bad-outbox-"));
    try {
      // A file where the outbox directory would go.
      writeFileSync(join(dir, "taken"), "");
      const { code, err } = await runToExit([
        ...["device", "Vendor Cellular BPM", "--broker", mqtt_url, "--imei", imei],
        ...["--url", base_url, "--admin-token", admin_token, "--days", "1", "--speed", "max"],
        ...["--outbox", join(dir, "taken", "outbox")],
      ]);
      expect(err).toContain("E_OUTBOX_UNAVAILABLE");
      expect(code).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const device = await connectAsync(mqtt_url, {
      clientId: imei,
      username: imei,
      password,
      reconnectPeriod: 0,
    });
    await device.endAsync();
  });

  it("below 1× speed, stops on SIGINT within a wall second's step", async () => {
    // A broker of its own, to see when the device is connected and its clock under way.
    const aedes = await Aedes.createBroker();
    const server = createServer(aedes.handle);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const ready = once(aedes, "clientReady");
    const { port } = server.address() as AddressInfo;
    try {
      // At 0.01× a virtual second is 100 wall seconds: the signal is taken within one.
      const slow = await runToExit(
        ["device", "Vendor Cellular BPM", "--broker", `mqtt://127.0.0.1:${port}`].concat([
          "--speed",
          "0.01",
          "--days",
          "1",
        ]),
        15_000,
        async (child) => {
          await ready;
          child.kill("SIGINT");
        },
      );
      expect(slow.code, slow.err).toBe(0);
      expect(slow.out).toMatch(/taken 0, sent 0/);
    } finally {
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      server.close();
      await once(server, "close");
    }
  });

  it("at a finite --speed, stops on SIGINT at once and exits 0 with its summary", async () => {
    const { mqtt_url, base_url, admin_token } = served!.info;
    const child = spawn(
      process.execPath,
      [
        ...[BIN, "device", "Vendor Cellular BPM", "--broker", mqtt_url],
        ...["--url", base_url, "--admin-token", admin_token, "--speed", "60"],
        // A reading each virtual minute (a wall second): the first shows the clock running.
        ...["--days", "30", "--every", "60"],
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
    let out = "";
    try {
      await within(30_000, "the device's first reading", (done) => {
        child.stdout.on("data", (c: Buffer) => {
          out += c.toString();
          if (out.includes("reading #")) done(undefined);
        });
      });
      // It stepped the clock an hour at a time: at 60× a wall minute before it looked at the
      // signal (six at 10×).
      child.kill("SIGINT");
      expect(await within(20_000, "the device to exit", (done) => void exited.then(done))).toEqual([
        0,
        null,
      ]);
      expect(out).toMatch(/taken \d+, sent \d+/);
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await exited;
      }
    }
  });
});

describe("rpmlab device <cellular type>: stopped while it connects", () => {
  it("a broker that takes the connection and never answers: SIGINT ends it at once, exit 0 with its summary", async () => {
    const silent = await silentBroker();
    try {
      const { code, out } = await runToExit(
        [
          ...["device", "Vendor Cellular BPM", "--broker", silent.url],
          ...["--imei", IMEI, "--password", "not-checked", "--json"],
        ],
        40_000,
        async (child) => {
          await within(30_000, "the device's CONNECT", (done) => void silent.connecting.then(done));
          const exited = once(child, "exit");
          child.kill("SIGINT");
          // MQTT.js gives up on the CONNACK after 10 s (then exit 1, E_BROKER_UNAVAILABLE): the
          // deadline is well inside it.
          await within(5_000, "the device to exit on SIGINT", (done) => void exited.then(done));
        },
      );
      expect(code).toBe(0);
      const events = out
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(events.at(-1)).toMatchObject({ event: "summary", imei: IMEI, taken: 0, sent: 0 });
    } finally {
      await silent.close();
    }
  });
});
