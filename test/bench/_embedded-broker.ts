/**
 * The embedded broker (aedes, `embedded:0`, no lab auth) alone in a child process, for benchmarks
 * that hold more client sockets than one process's file descriptors allow for both ends. Prints
 * `{"url": …}` as one JSON line once listening; stops the broker and exits when its stdin ends
 * (so it also ends when the parent dies).
 */
import { createBroker } from "../../src/mqtt/broker.ts";

const broker = createBroker("embedded:0");
await broker.start();
process.stdout.write(`${JSON.stringify({ url: broker.url })}\n`);
process.stdin.resume();
process.stdin.on("end", () => {
  void broker.stop().then(() => process.exit(0));
});
