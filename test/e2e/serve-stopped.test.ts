/**
 * `rpmlab serve` stopped as an operator stops it (README "rpmlab serve": SIGINT or SIGTERM shuts
 * it down cleanly): exit 0, and its log says the shutdown ended, so a log read without the exit
 * status (a journal, a log aggregator) tells a clean stop from a process killed half-way.
 */
import type { ChildProcess } from "node:child_process";
import { describe, expect, it } from "vitest";
import { runToExit } from "./cli-process.ts";

/** Resolves once the process has printed its first line on stdout (serve --json: ready). */
function ready(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("\n")) resolve();
    });
    child.once("close", (code, signal) => reject(new Error(`ended (${code ?? signal}) unready`)));
  });
}

describe("rpmlab serve stopped by a signal", () => {
  it.each(["SIGTERM", "SIGINT"] as const)(
    "on %s exits 0, its last log line saying it stopped",
    async (signal) => {
      const { code, err } = await runToExit(
        ["serve", "--store", "memory", "--broker", "embedded:0", "--port", "0", "--json"],
        60_000,
        async (child) => {
          await ready(child);
          child.kill(signal);
        },
      );
      expect(code).toBe(0);
      const lines = err
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { msg: string; signal?: string; level: number });
      expect(lines.find((l) => l.msg === "shutting down")).toMatchObject({ signal });
      expect(lines.at(-1)).toMatchObject({ level: 30, msg: "stopped", signal });
    },
    90_000,
  );
});
