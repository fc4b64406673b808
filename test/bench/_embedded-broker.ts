/**
 * The embedded broker (aedes, `embedded:0`, no lab auth) alone in a child process, for benchmarks
 * that hold more client sockets than one process's file descriptors allow for both ends. Prints
 * `{"url": …}` as one JSON line once listening; answers each `measure` line on stdin with
 * `{"rss": …, "heap": …}` (bytes, after a full collection); stops the broker and exits when its
 * stdin ends (so it also ends when the parent dies).
 */
import { createInterface } from "node:readline";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { createBroker } from "../../src/mqtt/broker.ts";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const broker = createBroker("embedded:0");
await broker.start();
process.stdout.write(`${JSON.stringify({ url: broker.url })}\n`);
const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  if (line !== "measure") return;
  gc();
  gc();
  const { rss, heapUsed } = process.memoryUsage();
  process.stdout.write(`${JSON.stringify({ rss, heap: heapUsed })}\n`);
});
lines.on("close", () => {
  void broker.stop().then(() => process.exit(0));
});
