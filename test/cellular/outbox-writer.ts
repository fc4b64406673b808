/**
 * Child process of outbox.test.ts: queues items into a disk outbox as fast as it can and prints
 * each sequence number once enqueue() has returned, until it is killed (SIGKILL).
 */
import { openOutbox } from "../../src/cellular/outbox.ts";
import { SystemClock } from "../../src/core/clock.ts";
import { Rng } from "../../src/core/rng.ts";

const [dir, name, capacity] = process.argv.slice(2) as [string, string, string];
const outbox = await openOutbox<{ n: number; pad: string }>({
  dir,
  name,
  capacity: Number(capacity),
  clock: new SystemClock(),
  rng: new Rng(`outbox-writer/${name}`),
});
const pad = "x".repeat(200);
for (let n = 0; ; n++) {
  const entry = outbox.enqueue({ n, pad });
  process.stdout.write(`${entry.seq}\n`);
  // Let stdout flush now and then, so the parent sees lines while we write.
  if (n % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
}
