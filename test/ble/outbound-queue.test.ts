/** The virtual devices' notifications and indications, one indication on the bearer at a time. */
import { describe, expect, it } from "vitest";
import { OutboundQueue } from "../../src/ble/hosts/outbound-queue.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";

/** How a pushed value ended: "sent", or its error's message; undefined while it waits. */
function outcome(sending: Promise<void>): () => string | undefined {
  let ended: string | undefined;
  sending.then(
    () => (ended = "sent"),
    (error: Error) => (ended = error.message),
  );
  return () => ended;
}

describe("the outbound queue of a virtual device", () => {
  it("sends nothing more once an indication goes unconfirmed for 30 s, and ends the link", async () => {
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 5, 8) });
    const started: string[] = [];
    let linkEnded = 0;
    const queue = new OutboundQueue(clock, () => linkEnded++);
    const indication = outcome(queue.push(true, () => started.push("indication")));
    const notification = outcome(queue.push(false, () => started.push("notification")));
    const second = outcome(queue.push(true, () => started.push("second indication")));

    await clock.run({ until: clock.now() + 30_000 });
    // Vol 3 Part F §3.3.3: no more ATT PDUs on the bearer. The queue sent what followed.
    expect(started).toEqual(["indication"]);
    expect(indication()).toBe("no Handle Value Confirmation within 30 s");
    expect(notification()).toBe("no Handle Value Confirmation within 30 s");
    expect(second()).toBe("no Handle Value Confirmation within 30 s");
    expect(linkEnded).toBe(1);
    const late = outcome(queue.push(false, () => started.push("late")));
    await clock.run({ until: clock.now() + 1000 });
    expect(late()).toBe("no Handle Value Confirmation within 30 s");
    expect(started).toEqual(["indication"]);

    // The next link sends again.
    queue.clear("the central disconnected");
    const next = outcome(queue.push(false, () => started.push("next link")));
    await clock.run({ until: clock.now() + 1000 });
    expect(next()).toBe("sent");
    expect(started).toEqual(["indication", "next link"]);
  });

  it("sends what follows a confirmed indication, in order", async () => {
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 5, 8) });
    const started: string[] = [];
    const queue = new OutboundQueue(clock);
    let confirm: (() => void) | undefined;
    const indication = outcome(
      queue.push(true, (done) => {
        started.push("indication");
        confirm = done;
      }),
    );
    const notification = outcome(queue.push(false, () => started.push("notification")));
    await clock.run({ until: clock.now() + 1000 });
    expect(started).toEqual(["indication"]);
    confirm!();
    await clock.run({ until: clock.now() + 1000 });
    expect(started).toEqual(["indication", "notification"]);
    expect(indication()).toBe("sent");
    expect(notification()).toBe("sent");
  });
});
