import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { ScenarioReport } from "../../src/scenario/report.ts";
import { SseClient } from "../support/sse.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = fileURLToPath(new URL("../../bin/rpmlab", import.meta.url));
/** The patients of scenarios/demo.yaml. */
const DEMO_PATIENTS = 12;

interface DemoInfo {
  base_url: string;
  dashboard_url: string;
  client_domain: string;
  api_key: string;
  admin_token: string;
  mqtt_url: string;
  docs_url: string;
  receiver_urls: Record<string, string>;
  deliveries_url: string;
  scenario: string;
  seed: number;
  patients: number;
  speed: number;
}

/**
 * `rpmlab demo` as a user runs it (issue 7 §3): a child process of bin/rpmlab on a free port, far
 * faster than its watchable default; its JSON line read, its API queried, then Ctrl-C (SIGINT):
 * the report on stdout (a second JSON line) and exit code 0.
 */
describe("rpmlab demo", () => {
  let child: ChildProcess | undefined;

  afterEach(async () => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
    }
    child = undefined;
  });

  it("serves the demo's patients and, on SIGINT, prints its report and exits 0", async () => {
    const { demo, output, exited, printed } = spawnDemo("--json", "--speed", "100000");
    child = demo;
    const [firstLine] = (await printed("stdout", /^.*\n/)) as [string];
    const info = JSON.parse(firstLine.trim()) as DemoInfo;
    expect(info).toMatchObject({
      client_domain: "clinic",
      scenario: "demo",
      seed: 7,
      patients: DEMO_PATIENTS,
      speed: 100_000,
    });
    expect(info.base_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(info.docs_url).toBe(`${info.base_url}/docs`);
    expect(info.mqtt_url).toMatch(/^mqtt:\/\/127\.0\.0\.1:\d+$/);
    expect(Object.keys(info.receiver_urls)).toEqual(["clinic"]);

    const patients = await fetch(
      `${info.base_url}/clients/${info.client_domain}/hwi/hwi-patients/?page=1`,
      { headers: { Authorization: `Api-Key ${info.api_key}` } },
    );
    expect(patients.status).toBe(200);
    expect(((await patients.json()) as { count: number }).count).toBe(DEMO_PATIENTS);
    const deliveries = await fetch(`${info.deliveries_url}?page=1`, {
      headers: { Authorization: `Bearer ${info.admin_token}` },
    });
    expect(deliveries.status).toBe(200);
    // Every patient's PATIENT webhook is queued once the fleet is enrolled.
    expect(((await deliveries.json()) as { count: number }).count).toBeGreaterThanOrEqual(
      DEMO_PATIENTS,
    );

    // The dashboard a demo audience watches: the page, and its feed carrying the demo's traffic.
    expect(info.dashboard_url).toBe(`${info.base_url}/dashboard/#token=${info.admin_token}`);
    const page = await fetch(info.dashboard_url);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const feed = await SseClient.open(`${info.base_url}/lab/v1/events/`, info.admin_token);
    try {
      const reading = await feed.next("reading");
      expect(reading.account_id).not.toBeNull();
      expect(typeof reading.value_1).toBe("number");
      expect(await feed.next("gateway")).toMatchObject({ online: expect.any(Boolean) });
    } finally {
      await feed.close();
    }

    // Two virtual days in: readings wait in devices and outboxes, a run cut short must still end.
    await printed("stderr", /^day 2\/365 /m);
    demo.kill("SIGINT");
    const [code, signal] = await withDeadline(
      exited,
      30_000,
      () => `exit after SIGINT; stderr:\n${output.stderr}`,
    );
    expect({ code, signal }, output.stderr).toEqual({ code: 0, signal: null });
    // --json: stdout is JSON lines to the end, the report the second (it was text after the line).
    const lines = output.stdout.split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe("");
    const report = JSON.parse(lines[1]!) as ScenarioReport;
    expect(report).toMatchObject({ scenario: "demo", file: "scenarios/demo.yaml", seed: 7 });
    expect(report.passed).toBe(true);
    expect(report.expectations[0]).toMatchObject({
      text: "every demo patient enrolled through the HWI API",
      passed: true,
      actual: `status 200, count ${DEMO_PATIENTS}`,
    });
    expect(report.counts.readings.taken).toBeGreaterThan(0);
    expect(output.stderr).toMatch(/^done readings \d+ webhooks \d+ faults \d+$/m);
  }, 60_000);

  // At 0.01× the step is a wall second's worth of virtual time, 10 ms; at 0.00001× the least
  // step, a virtual ms, would last 100 wall seconds: the clock's wait ends on the signal.
  it.each(["0.01", "0.00001"])(
    "at --speed %s, stops on SIGINT within a wall second",
    async (speed) => {
      const { demo, output, exited, printed } = spawnDemo("--json", "--speed", speed);
      child = demo;
      // The details line comes as the run takes its first step of virtual time.
      await withDeadline(printed("stdout", /^.*\n/), 30_000, () => "the demo's details line");
      demo.kill("SIGINT");
      const [code, signal] = await withDeadline(
        exited,
        10_000,
        () => `exit after SIGINT; stderr:\n${output.stderr}`,
      );
      expect({ code, signal }, output.stderr).toEqual({ code: 0, signal: null });
      const report = JSON.parse(output.stdout.split("\n")[1]!) as ScenarioReport;
      expect(report).toMatchObject({ scenario: "demo", seed: 7, passed: true });
    },
    60_000,
  );

  it("says how fast it goes, in ms when a virtual day takes less than a wall second", async () => {
    const { demo, output, exited, printed } = spawnDemo("--speed", "100000000");
    child = demo;
    await printed("stdout", /^Ctrl-C stops it and prints a report\.\n/m);
    // To the hundredth of a second this read "a virtual day every 0 s".
    expect(output.stdout).toMatch(
      /^rpmlab demo: 12 patients of scenario demo \(scenarios\/demo\.yaml\), seed 7, speed 100000000× \(a virtual day every 0\.864 ms of wall time\)\n/,
    );
    demo.kill("SIGINT");
    const [code] = await withDeadline(exited, 30_000, () => `exit; stderr:\n${output.stderr}`);
    expect(code).toBe(0);
  }, 60_000);
});

/** `rpmlab demo --port 0 ARGS` as a child process, its output kept as it comes. */
function spawnDemo(...args: string[]) {
  const demo = spawn(process.execPath, [BIN, "demo", "--port", "0", ...args], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = { stdout: "", stderr: "" };
  demo.stdout!.on("data", (chunk: Buffer) => {
    output.stdout += chunk.toString();
  });
  demo.stderr!.on("data", (chunk: Buffer) => {
    output.stderr += chunk.toString();
  });
  const exited = once(demo, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  /** Resolves once `probe` finds something in what the process printed so far. */
  const printed = (stream: "stdout" | "stderr", probe: RegExp) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const match = output[stream].match(probe);
        if (match === null) return;
        demo[stream]!.off("data", check);
        resolve(match);
      };
      demo[stream]!.on("data", check);
      void exited.then(([code]) =>
        reject(
          new Error(`rpmlab demo exited with ${code} before ${probe}; stderr:\n${output.stderr}`),
        ),
      );
    });
  return { demo, output, exited, printed };
}

/** `work`, or a failure naming what did not happen once `ms` of wall time passed. */
async function withDeadline<T>(work: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what()} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
