/**
 * `rpmlab device <cellular type> --broker URL`: usage errors, and short runs against a broker
 * with the lab's credentials and ACL (in process), as a user runs them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { unsentNote } from "../../src/cli/cellular-device.ts";
import { main } from "../../src/cli/main.ts";
import { connectClient } from "../../src/mqtt/client.ts";
import { issueCredentials } from "../../src/mqtt/credentials.ts";
import { cellularUplinkSchema } from "../../src/mqtt/envelope.ts";
import { filterOf } from "../../src/mqtt/topics.ts";
import type { Store } from "../../src/store/store.ts";
import { memoryStore } from "../ingest/fixtures.ts";
import { IngestLab } from "../ingest/harness.ts";
import { Inbox } from "../mqtt/helpers.ts";

const IMEI = "356938035643809";
/** `rpmlab <args>` in process; each io.out call is one line. */
async function runCli(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(["node", "rpmlab", ...args], {
    out: (t) => out.push(t.replace(/\n$/, "")),
    err: (t) => err.push(t),
  });
  return { code, stdout: out.join("\n"), stderr: err.join(""), out };
}

const lines = (stdout: string) =>
  stdout
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("rpmlab device: readings left unsent at the end", () => {
  it("says they are lost without --outbox, and where they wait with it", () => {
    expect(unsentNote(4, undefined)).toBe(
      "4 reading(s) not sent yet are lost: the outbox was in memory (--outbox DIR keeps them for the next run)",
    );
    expect(unsentNote(4, "ob")).toBe(
      "4 reading(s) not sent yet stay in the outbox in ob for the next run",
    );
  });
});

describe("rpmlab device: usage", () => {
  const cases: [string[], number, RegExp][] = [
    [["Vendor Cellular BPM"], 2, /E_USAGE: .*direct-cellular.*give --broker mqtt:\/\//],
    [
      ["Vendor Cellular Pulse Ox", "--ble", "emulated"],
      2,
      /E_USAGE: .*own modem: give --broker .*not --ble/,
    ],
    [
      ["Vendor BPM - Wide Range", "--broker", "mqtt://127.0.0.1:1", "--imei", IMEI],
      2,
      /E_USAGE: .*through a gateway over BLE: --broker, --imei are for direct-cellular types only/,
    ],
    [
      ["Vendor Cellular Scale", "--broker", "mqtt://127.0.0.1:1", "--imei", "12345"],
      2,
      /E_CONFIG_INVALID: --imei must be 15 digits/,
    ],
    [["Vendor Cellular Scale", "--broker", "embedded"], 2, /--broker must be the broker's URL/],
    [
      ["Vendor Cellular Scale", "--broker", "http://x"],
      2,
      /E_CONFIG_INVALID: --broker: invalid broker/,
    ],
    // Decimal only: Number() read 0x3C as 60 and 1e999 as Infinity.
    ...["fast", "0x3C", "Infinity", "1e999", "1e"].map((speed): [string[], number, RegExp] => [
      ["Vendor Cellular Scale", "--broker", "mqtt://127.0.0.1:1", "--speed", speed],
      2,
      /E_CONFIG_INVALID: --speed must be a decimal number > 0 or max/,
    ]),
    [
      ["Vendor Cellular Scale", "--broker", "mqtt://127.0.0.1:1", "--duplicate-rate", "0x0"],
      2,
      /E_CONFIG_INVALID: --duplicate-rate must be from 0 to below 1, got "0x0"/,
    ],
    // As run --seed and a scenario file's seed: a number seed is a whole one.
    [
      ["Vendor Cellular Scale", "--broker", "mqtt://127.0.0.1:1", "--seed", "1.5"],
      2,
      /E_USAGE: --seed "1\.5" is a number, and a number seed is a whole number/,
    ],
    [
      ["Vendor Cellular Scale", "--broker", "mqtt://127.0.0.1:1", "--username", "u"],
      2,
      /--username needs --password \(or \$RPMLAB_MQTT_PASSWORD\)/,
    ],
    [["Vendor Cellular Nothing", "--broker", "mqtt://127.0.0.1:1"], 1, /E_PROFILE_NOT_FOUND/],
    // A BLE device's whole-number flags: past 2^53 − 1 a number no longer holds the digits.
    [
      ["Vendor BPM - S", "--ble", "emulated", "--every", "99999999999999999999"],
      2,
      /E_CONFIG_INVALID: --every must be a whole number up to 9007199254740991, got "99999999999999999999"/,
    ],
    // Times the device's clock cannot write (GATT Date Time, years 1582–9999): refused before
    // it connects, not an E_CODEC_RANGE at its first reading (or a dead letter past 9999).
    [
      ["Vendor Cellular BPM", "--broker", "mqtt://127.0.0.1:1", "--start", "1500-01-01"],
      2,
      /E_CONFIG_INVALID: --start must be 1582-01-02 or later: the device's clock writes Date Time/,
    ],
    [
      ["Vendor Cellular BPM", "--broker", "mqtt://127.0.0.1:1", "--start", "9999-12-31T12:00:00Z"],
      2,
      /E_CONFIG_INVALID: --start with --days 1 runs past 9999-12-31/,
    ],
    [
      [
        "Vendor Cellular BPM",
        "--broker",
        "mqtt://127.0.0.1:1",
        "--start",
        "9999-01-01",
        "--days",
        "365",
      ],
      2,
      /E_CONFIG_INVALID: --start with --days 365 runs past 9999-12-31/,
    ],
    [
      [
        "Vendor Cellular BPM",
        "--broker",
        "mqtt://127.0.0.1:1",
        "--start",
        "9999-12-01",
        "--days",
        "20",
        "--every",
        "86400",
      ],
      2,
      /E_CONFIG_INVALID: --every 86400 from --start takes its \d+ readings past 9999-12-31/,
    ],
  ];
  for (const [args, code, message] of cases)
    it(`${args.join(" ")} → exit ${code}`, async () => {
      const run = await runCli("device", ...args);
      expect(run.stderr).toMatch(message);
      expect(run.code).toBe(code);
      expect(run.stdout).toBe("");
    });
});

describe("rpmlab device <cellular type> --broker: a short run", () => {
  let store: Store;
  let lab: IngestLab;
  let dir: string;
  let watchers = 0;

  beforeAll(async () => {
    ({ store } = await memoryStore());
    // The broker answers in real time: its clock is not the device's.
    lab = new IngestLab(store, (await memoryStore()).clock);
    await lab.start();
    dir = mkdtempSync(join(tmpdir(), "rpmlab-cell-cli-"));
  });
  afterAll(async () => {
    await lab.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function watchUplinks(): Promise<Inbox> {
    const { username, password } = await issueCredentials(
      store.mqttCredentials,
      "service",
      `watch-${++watchers}`,
    );
    const inbox = new Inbox();
    const client = lab.clients.add(
      await connectClient(lab.broker.url, {
        clientId: username,
        username,
        password,
        clean: true,
        prepare: (c) => inbox.watch(c),
      }),
    );
    await client.subscribeAsync(filterOf("cell/up"), { qos: 1 });
    return inbox;
  }

  it("publishes every reading of the days asked, in the cell/up envelope, and prints each event", async () => {
    const { password } = await issueCredentials(store.mqttCredentials, "cellular", IMEI);
    const inbox = await watchUplinks();
    const run = await runCli(
      "device",
      "Vendor Cellular Glucometer",
      "--broker",
      lab.broker.url,
      "--imei",
      IMEI,
      "--password",
      password,
      "--days",
      "3",
      "--start",
      "2026-03-01T00:00:00Z",
      "--speed",
      "max",
      "--duplicate-rate",
      "0.3",
      "--outbox",
      dir,
      "--json",
    );
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const events = lines(run.stdout);
    expect(events[0]).toMatchObject({
      event: "started",
      imei: IMEI,
      device_type: "Vendor Cellular Glucometer",
    });
    const readings = events.filter((e) => e.event === "reading");
    const summary = events.at(-1)!;
    expect(summary).toMatchObject({ event: "summary", imei: IMEI, queued: 0, dropped: 0 });
    // snake_case keys, as every other event's.
    expect(Object.keys(summary)).toEqual([
      "event",
      "imei",
      "taken",
      "sent",
      "stored_offline",
      "lost_by_design",
      "dropped",
      "duplicates_sent",
      "queued",
    ]);
    expect(readings.length).toBeGreaterThan(3);
    expect(summary.taken).toBe(readings.filter((r) => r.duplicate === false).length);
    expect(summary.sent).toBe(readings.length);
    // What reached the broker: schema-valid envelopes of this IMEI carrying every reading. The
    // broker's PUBACK ends the command's wait, not the watcher's receipt: the last envelope may
    // reach the watcher after the command has exited.
    const envelopesOf = (messages: readonly { payload: Buffer }[]) =>
      messages.map((m) => cellularUplinkSchema.parse(JSON.parse(m.payload.toString())));
    await inbox.until(
      (m) => envelopesOf(m).flatMap((e) => e.readings).length >= readings.length,
      `${readings.length} readings`,
    );
    const envelopes = envelopesOf(inbox.messages);
    expect(envelopes.every((e) => e.imei === IMEI)).toBe(true);
    expect(envelopes.flatMap((e) => e.readings)).toHaveLength(readings.length);
    const sent = events.filter((e) => e.event === "sent").map((e) => e.message_id);
    expect(new Set(envelopes.map((e) => e.message_id))).toEqual(new Set(sent));
  });

  it("the same seed takes the same readings; wrong credentials fail with E_BROKER_REFUSED", async () => {
    const args = (password: string) => [
      "device",
      "Vendor Cellular Scale",
      "--broker",
      lab.broker.url,
      "--imei",
      "490154203237518",
      "--password",
      password,
      "--start",
      "2026-03-01T00:00:00Z",
      "--speed",
      "max",
      "--json",
    ];
    const { password } = await issueCredentials(
      store.mqttCredentials,
      "cellular",
      "490154203237518",
    );
    const values = (stdout: string) =>
      lines(stdout)
        .filter((e) => e.event === "reading")
        .map((e) => e.records);
    const a = await runCli(...args(password));
    const b = await runCli(...args(password));
    expect(a.code).toBe(0);
    expect(values(a.stdout).length).toBeGreaterThan(0);
    expect(values(b.stdout)).toEqual(values(a.stdout));
    const refused = await runCli(...args("wrong"));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/E_BROKER_REFUSED: .*bad user name or password/);
  });

  describe("the password from $RPMLAB_MQTT_PASSWORD, which no command line shows", () => {
    afterEach(() => {
      vi.unstubAllEnvs();
    });
    const imei = "353456789012348";
    const args = [
      ...["device", "Vendor Cellular Scale", "--broker", "mqtt://127.0.0.1:1", "--imei", imei],
      ...["--start", "2026-03-01T00:00:00Z", "--speed", "max", "--json"],
    ];
    const at = (broker: string) => args.map((a) => (a === "mqtt://127.0.0.1:1" ? broker : a));

    it("connects with it; a wrong one is the broker's refusal; --password wins over it", async () => {
      const { password } = await issueCredentials(store.mqttCredentials, "cellular", imei);
      vi.stubEnv("RPMLAB_MQTT_PASSWORD", password);
      const run = await runCli(...at(lab.broker.url));
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      expect(lines(run.stdout).at(-1)).toMatchObject({ event: "summary", imei, queued: 0 });
      vi.stubEnv("RPMLAB_MQTT_PASSWORD", "wrong");
      const refused = await runCli(...at(lab.broker.url));
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/E_BROKER_REFUSED: .*bad user name or password/);
      const flag = await runCli(...at(lab.broker.url), "--password", password);
      expect(flag.code, flag.stderr).toBe(0);
    });

    it("with --url or --admin-token too, a usage error names the variable; empty is unset", async () => {
      vi.stubEnv("RPMLAB_MQTT_PASSWORD", "s3cret");
      const both = await runCli(...args, "--admin-token", "t".repeat(20));
      expect(both.code).toBe(2);
      expect(both.stderr).toContain(
        "E_USAGE: $RPMLAB_MQTT_PASSWORD is set: give either it or --url/--admin-token",
      );
      vi.stubEnv("RPMLAB_MQTT_PASSWORD", "");
      const empty = await runCli(...args, "--username", "u");
      expect(empty.code).toBe(2);
      expect(empty.stderr).toContain("--username needs --password (or $RPMLAB_MQTT_PASSWORD)");
    });
  });

  it("on real time (no --speed), --every 1 takes a reading a second and ends once they are sent", async () => {
    const imei = "358240051111110";
    const { password } = await issueCredentials(store.mqttCredentials, "cellular", imei);
    const run = await runCli(
      "device",
      "Vendor Cellular Scale",
      ...["--broker", lab.broker.url, "--imei", imei, "--password", password],
      ...["--days", "2", "--every", "1", "--duplicate-rate", "0", "--json"],
    );
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const events = lines(run.stdout);
    const times = events
      .filter((e) => e.event === "reading")
      .map((e) => Date.parse(e.timestamp as string));
    expect(times.length).toBeGreaterThan(1);
    expect(times.slice(1).map((t, i) => t - times[i]!)).toEqual(times.slice(1).map(() => 1000));
    expect(events.at(-1)).toMatchObject({ event: "summary", sent: times.length, queued: 0 });
  });
});
