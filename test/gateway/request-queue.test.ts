import { describe, expect, it } from "vitest";
import { isRpmlabError } from "../../src/core/errors.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { RequestQueue } from "../../src/gateway/request-queue.ts";

describe("RequestQueue (Waitress: timeouts start at send)", () => {
  it("a queued request's timeout starts when its turn comes, not when it is queued", async () => {
    const clock = new VirtualClock({ startMs: 0 });
    const q = new RequestQueue(clock, "dev");
    const slow = q.run("discover", 5000, () => clock.sleep(4000).then(() => "services"));
    const read = q.run("read", 1000, () => clock.sleep(900).then(() => "value"));
    await clock.run();
    // read waited 4 s in the queue but answered 0.9 s after it was sent: within its 1 s.
    await expect(slow).resolves.toBe("services");
    await expect(read).resolves.toBe("value");
    expect(clock.now()).toBe(4900);
  });

  it("times out with E_BLE_TIMEOUT naming the device and the operation", async () => {
    const clock = new VirtualClock({ startMs: 0 });
    const q = new RequestQueue(clock, "c0:00:00:00:00:09");
    const never = q.run("write RACP", 1000, () => new Promise<never>(() => undefined));
    const next = q.run("read", 1000, () => Promise.resolve(1));
    const caught = never.catch((e: unknown) => e);
    await clock.run();
    const error = await caught;
    expect(isRpmlabError(error, "E_BLE_TIMEOUT")).toBe(true);
    expect((error as Error).message).toMatch(/c0:00:00:00:00:09: write RACP/);
    await expect(next).resolves.toBe(1);
  });
});
