/**
 * Runs every benchmark in test/bench one after another, each in its own process so one
 * benchmark's heap and JIT state never colour another's figures, and with the V8 flag bin/rpmlab
 * starts node with (NODE_FLAGS), so the figures are the lab's as users run it. Benchmarks print
 * figures; they assert nothing (timed assertions flake on shared CI machines).
 *
 *   npm run bench                                        every benchmark
 *   npm run bench -- webhooks ingest                     those whose file name contains a word
 *   npm run bench -- scenario-cohort --patients 200      from the first option on, the rest is
 *                                                        the chosen benchmarks' own arguments
 */
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { NODE_FLAGS } from "./_node-flags.ts";

const dir = fileURLToPath(new URL(".", import.meta.url));
const args = process.argv.slice(2);
const firstOption = args.findIndex((a) => a.startsWith("-"));
const only = firstOption === -1 ? args : args.slice(0, firstOption);
const passed = firstOption === -1 ? [] : args.slice(firstOption);
const benches = readdirSync(dir)
  .filter((f) => f.endsWith(".ts") && f !== "run.ts" && !f.startsWith("_"))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

for (const file of benches) {
  process.stdout.write(`\n== ${file}\n`);
  execFileSync(process.execPath, [...NODE_FLAGS, "--import", "tsx", `${dir}${file}`, ...passed], {
    stdio: "inherit",
  });
}
