import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/** What test/bench/ingest.ts measured for its ingest phase. */
export interface IngestBaseline {
  readonly messagesPerSecond: number;
  readonly readingsPerSecond: number;
  /** Its line as printed. */
  readonly line: string;
}

const INGEST_LINE = /ingest → .*?: ([\d,]+) messages\/s = ([\d,]+) readings\/s/;

/**
 * Runs the ingest benchmark in a child process of its own (its heap and JIT state apart from the
 * caller's, as test/bench/run.ts runs every bench) and reads its ingest rate: the reference a
 * benchmark of the same pipeline with more in front of it is compared to, in the same run.
 */
export function ingestBaseline(args: readonly string[]): IngestBaseline {
  const script = fileURLToPath(new URL("./ingest.ts", import.meta.url));
  const out = execFileSync(process.execPath, ["--import", "tsx", script, ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const line = out.split("\n").find((l) => INGEST_LINE.test(l));
  const match = line === undefined ? null : INGEST_LINE.exec(line);
  if (line === undefined || match === null) {
    throw new Error(`test/bench/ingest.ts printed no ingest rate:\n${out}`);
  }
  const num = (s: string) => Number(s.replaceAll(",", ""));
  return {
    messagesPerSecond: num(match[1]!),
    readingsPerSecond: num(match[2]!),
    line: line.trim(),
  };
}
