/**
 * `rpmlab serve` as a user runs it: bin/rpmlab executed itself (its `#!/bin/sh` line execs
 * node), its one JSON line read from stdout, stopped with SIGTERM. Every wait has a deadline;
 * nothing sleeps.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";

export const BIN = fileURLToPath(new URL("../../bin/rpmlab", import.meta.url));

export interface ServeInfo {
  base_url: string;
  dashboard_url: string;
  client_domain: string;
  api_key: string;
  admin_token: string;
  mqtt_url: string;
}

export interface Served {
  readonly info: ServeInfo;
  /** The process id: node's own, the shim's sh having exec'd it. */
  readonly pid: number;
  readonly stderr: () => string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL (kill -9): no shutdown of any kind; resolves once the process is gone. */
  kill(): Promise<void>;
}

export async function startServe(args: string[], deadlineMs = 30_000): Promise<Served> {
  const child: ChildProcess = spawn(BIN, ["serve", "--json", "--log-level", "warn", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    err += chunk.toString();
  });
  let out = "";
  const info = await new Promise<ServeInfo>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`rpmlab serve printed nothing in ${deadlineMs} ms; stderr:\n${err}`));
    }, deadlineMs);
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split("\n")[0];
      if (out.includes("\n") && line !== undefined) {
        clearTimeout(timer);
        resolve(JSON.parse(line) as ServeInfo);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`rpmlab serve exited with ${code} before it was ready; stderr:\n${err}`));
    });
  });
  return {
    info,
    pid: child.pid!,
    stderr: () => err,
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      const [code] = (await exited) as [number | null];
      return code;
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
    },
  };
}

/** Polls `probe` until it returns a value, failing after the deadline (a bounded wait on state
 * another process owns: there is no event to listen to across the process boundary). */
export async function eventually<T>(
  probe: () => Promise<T | undefined>,
  what: string,
  deadlineMs = 15_000,
): Promise<T> {
  const start = performance.now();
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() - start > deadlineMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
