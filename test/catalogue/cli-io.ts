import type { CliIo } from "../../src/cli/io.ts";
import { main } from "../../src/cli/main.ts";

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `rpmlab <args>` in process, capturing what it writes to stdout and stderr. */
export async function runCli(...args: string[]): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (t) => out.push(t), err: (t) => err.push(t) };
  const code = await main(["node", "rpmlab", ...args], io);
  return { code, stdout: out.join(""), stderr: err.join("") };
}
