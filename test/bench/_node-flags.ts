/**
 * The V8 flag bin/rpmlab starts node with (its line 2): the young generation at 64 MiB a
 * semi-space. `npm run bench` (run.ts) starts every benchmark with it, so the figures are the
 * lab's as users run it; a benchmark started with plain `node` runs on V8's 16 MiB default.
 */
export const NODE_FLAGS: readonly string[] = ["--max-semi-space-size=64"];

/**
 * A line to print when this process lacks NODE_FLAGS: figures taken without them are not the
 * lab's (webhooks: about a tenth more CPU per delivery in garbage collection, 2026-11-29).
 */
export function missingNodeFlags(): string | undefined {
  const missing = NODE_FLAGS.filter((flag) => !process.execArgv.includes(flag));
  if (missing.length === 0) return undefined;
  return `note: started without ${missing.join(" ")} (bin/rpmlab's node flags; npm run bench adds them): these figures are not the lab's as it runs`;
}
