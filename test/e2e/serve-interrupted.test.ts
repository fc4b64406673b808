/**
 * A Ctrl-C while `rpmlab serve` starts, as a user meets it on a slow start: the lab finishes
 * starting, prints its details (the API key it made is shown nowhere else), then stops as after
 * "ready" — its SQLite store closed cleanly, no write-ahead log left to recover — and exits 0.
 * It used to die at once with 130, the store mid-write. The start is held at a known point: the
 * MQTT broker here (aedes, port 0) answers the lab's first CONNECT only once the lab has said it
 * got the signal.
 */
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Aedes } from "aedes";
import { afterEach, describe, expect, it } from "vitest";
import { runToExit } from "./cli-process.ts";

/** Resolves once the process has written `text` to stderr; rejects if it ends first. */
function saying(child: ChildProcess, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let err = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      err += chunk.toString();
      if (err.includes(text)) resolve();
    });
    child.once("close", (code, signal) =>
      reject(new Error(`ended (${code ?? signal}) without saying "${text}": ${err}`)),
    );
  });
}

describe("rpmlab serve interrupted while starting", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("finishes starting, prints its details, stops cleanly and exits 0", async () => {
    let answerFirst: (() => void) | undefined;
    let firstArrived: () => void = () => undefined;
    const firstConnect = new Promise<void>((resolve) => {
      firstArrived = resolve;
    });
    const aedes = await Aedes.createBroker({
      authenticate: (_client, _username, _password, done) => {
        if (answerFirst !== undefined) return done(null, true);
        answerFirst = () => done(null, true);
        firstArrived();
      },
    });
    const server = createServer(aedes.handle);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    const dir = mkdtempSync(join(tmpdir(), "rpmlab-serve-interrupted-"));
    dirs.push(dir);
    const db = join(dir, "lab.db");
    try {
      const { code, out, err } = await runToExit(
        [
          "serve",
          "--store",
          `sqlite:${db}`,
          "--broker",
          `mqtt://127.0.0.1:${port}`,
          "--port",
          "0",
          "--json",
          "--log-level",
          "warn",
        ],
        60_000,
        async (child) => {
          const heard = saying(child, "stopping once started");
          await firstConnect;
          child.kill("SIGINT");
          await heard;
          answerFirst!();
        },
      );
      expect(JSON.parse(out)).toMatchObject({ client_domain: "lab" });
      expect(err).toContain("stopping once started");
      expect(code).toBe(0);
      expect(existsSync(`${db}-wal`)).toBe(false);
    } finally {
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      server.close();
      await once(server, "close");
    }
  }, 90_000);
});
