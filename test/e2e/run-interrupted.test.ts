/**
 * A Ctrl-C during `rpmlab run` of a scenario paced below real time (`clock.speed: 0.01`, a
 * virtual day in 100 wall days): the run stops at once, as Node ends any program on SIGINT —
 * no report (the reports are of whole runs), signal status (130 in a shell). The run is known
 * to be under way when the scenario's webhook, an HTTP server here on port 0, gets the PATIENT
 * event of its enrolment.
 */
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { within } from "../ble/support/lab.ts";
import { runToExit } from "./cli-process.ts";

describe("rpmlab run interrupted", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("below 1× speed, stops on SIGINT at once, with no report", async () => {
    let enrolled: () => void = () => undefined;
    const patientWebhook = new Promise<void>((resolve) => {
      enrolled = resolve;
    });
    const hook = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.end();
        enrolled();
      });
    });
    hook.listen(0, "127.0.0.1");
    await once(hook, "listening");
    const { port } = hook.address() as AddressInfo;
    const dir = mkdtempSync(join(tmpdir(), "rpmlab-run-interrupted-"));
    dirs.push(dir);
    const file = join(dir, "paced.yaml");
    writeFileSync(
      file,
      [
        "scenario: paced",
        "seed: 1",
        "clock: { start: 2026-01-05T00:00:00Z, speed: 0.01 }",
        "duration: 1d",
        "accounts:",
        "  - id: clinic",
        `    webhooks: [{ id: hook, events: [PATIENT], url: "http://127.0.0.1:${port}/hook" }]`,
        "cohorts:",
        "  - { id: htn, account: clinic, count: 1, model: hypertensive, kit: [Vendor Scale], connectivity: gateway }",
        'expect: [{ readings: { stored: ">= 0" } }]',
      ].join("\n"),
    );
    const report = join(dir, "report.json");
    try {
      const { code, signal, out } = await runToExit(
        ["run", file, "--report", "json", report],
        60_000,
        async (child) => {
          await within(30_000, "the PATIENT webhook of the run's enrolment", (done) => {
            void patientWebhook.then(done);
          });
          child.kill("SIGINT");
          // At once: a paced step (10 virtual ms at 0.01×) is not waited out, nor the day.
          await within(5_000, "rpmlab run to end after SIGINT", (done) => {
            child.once("close", () => done(undefined));
          });
        },
      );
      expect({ code, signal }).toEqual({ code: null, signal: "SIGINT" });
      expect(out).toBe("");
      expect(existsSync(report)).toBe(false);
    } finally {
      hook.closeAllConnections();
      hook.close();
      await once(hook, "close");
    }
  }, 90_000);
});
