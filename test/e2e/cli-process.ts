import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { within } from "../ble/support/lab.ts";

export const BIN = fileURLToPath(new URL("../../bin/rpmlab", import.meta.url));

export interface CliExit {
  readonly code: number | null;
  /** The signal that ended the process (null when it exited by itself). */
  readonly signal: NodeJS.Signals | null;
  readonly out: string;
  readonly err: string;
}

/**
 * Runs `rpmlab …args` as a process to its end; stdio is read to its close, so nothing written is
 * missed. A command that hangs instead of exiting is a failure of its own (something left open):
 * past `deadlineMs` it is killed and this rejects; so it is when `during` fails.
 */
export async function runToExit(
  args: readonly string[],
  deadlineMs = 30_000,
  /** Acts on the process while it runs (sends it a signal, say). */
  during?: (child: ChildProcess) => Promise<void>,
): Promise<CliExit> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => {
    out += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    err += c.toString();
  });
  const closed = once(child, "close") as Promise<[number | null, NodeJS.Signals | null]>;
  try {
    const exit = within<[number | null, NodeJS.Signals | null]>(
      deadlineMs,
      `rpmlab ${args.join(" ")} to exit`,
      (done) => {
        void closed.then(done);
      },
    );
    // The deadline bounds the hook too, and the hook's failure ends the wait at once: either way
    // the process is killed below, not left running after a failed test.
    const [[code, signal]] = await Promise.all([exit, Promise.race([during?.(child), exit])]);
    return { code, signal, out, err };
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await closed;
    }
  }
}
