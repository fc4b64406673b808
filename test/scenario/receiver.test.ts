import { afterEach, describe, expect, it } from "vitest";
import type { Clock, TimerHandle } from "../../src/core/clock.ts";
import { LabReceiver } from "../../src/scenario/receiver.ts";

/**
 * A Clock whose timers run only when the test fires them, and which says when one is armed or
 * cleared: the receiver's slow answers become events the test can wait on, with no sleeps.
 */
class StepClock implements Clock {
  private nextId = 1;
  private readonly timers = new Map<number, () => void>();
  private onArm: ((t: { delayMs: number; fire: () => void }) => void)[] = [];
  private onClear: (() => void)[] = [];

  now(): number {
    return 0;
  }

  setTimeout(fn: () => void, delayMs: number): TimerHandle {
    const id = this.nextId++;
    this.timers.set(id, fn);
    const fire = () => {
      if (this.timers.delete(id)) fn();
    };
    for (const wake of this.onArm.splice(0)) wake({ delayMs, fire });
    return { id };
  }

  clearTimeout(handle: TimerHandle): void {
    if (this.timers.delete(handle.id)) for (const wake of this.onClear.splice(0)) wake();
  }

  sleep(): Promise<void> {
    throw new Error("not used by the receiver");
  }

  armed(): Promise<{ delayMs: number; fire: () => void }> {
    return new Promise((resolve) => this.onArm.push(resolve));
  }

  cleared(): Promise<void> {
    return new Promise((resolve) => this.onClear.push(resolve));
  }

  waiting(): number {
    return this.timers.size;
  }
}

let receiver: LabReceiver | undefined;

afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

async function start(clock?: Clock): Promise<LabReceiver> {
  receiver = await LabReceiver.start(clock === undefined ? {} : { clock });
  return receiver;
}

function post(url: string, body: string, delivery = "d-1", signal?: AbortSignal) {
  return fetch(url, {
    method: "POST",
    ...(signal === undefined ? {} : { signal }),
    headers: {
      "content-type": "application/json",
      "X-Rpmlab-Event": "MEASUREMENT",
      "X-Rpmlab-Delivery": delivery,
    },
    body,
  });
}

describe("LabReceiver", () => {
  it("answers 200 and records each delivery with its webhook, headers and body", async () => {
    const lab = await start();
    expect(lab.url("main")).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks\/main$/);
    const first = await post(lab.url("main"), '{"id":1}', "d-1");
    expect(first.status).toBe(200);
    await first.text();
    const second = await post(lab.url("audit log"), "[1,2]", "d-2");
    expect(second.status).toBe(200);
    await second.text();
    expect(lab.received()).toEqual([
      { webhookId: "main", event: "MEASUREMENT", deliveryId: "d-1", body: '{"id":1}' },
      { webhookId: "audit log", event: "MEASUREMENT", deliveryId: "d-2", body: "[1,2]" },
    ]);
    expect(lab.received("audit log")).toHaveLength(1);
    expect(lab.received("other")).toEqual([]);
  });

  it("down: drops the connection without an answer and records nothing", async () => {
    const lab = await start();
    lab.setFault("main", { kind: "down" });
    await expect(post(lab.url("main"), "{}")).rejects.toThrow();
    // Other webhooks are not affected.
    const ok = await post(lab.url("audit"), "{}");
    expect(ok.status).toBe(200);
    await ok.text();
    lab.setFault("main", null);
    const back = await post(lab.url("main"), '{"back":true}');
    expect(back.status).toBe(200);
    await back.text();
    expect(lab.received().map((d) => [d.webhookId, d.body])).toEqual([
      ["audit", "{}"],
      ["main", '{"back":true}'],
    ]);
  });

  it("error: answers the status, recording only a 2xx", async () => {
    const lab = await start();
    lab.setFault("main", { kind: "error", status: 503 });
    const failed = await post(lab.url("main"), "{}");
    expect(failed.status).toBe(503);
    await failed.text();
    expect(lab.received()).toEqual([]);
    lab.setFault("main", { kind: "error", status: 202 });
    const accepted = await post(lab.url("main"), "{}");
    expect(accepted.status).toBe(202);
    await accepted.text();
    expect(lab.received()).toHaveLength(1);
  });

  it("slow: answers 200 after the delay (wall time by default) and records it then", async () => {
    const lab = await start();
    lab.setFault("main", { kind: "slow", delayMs: 20 });
    const answer = await post(lab.url("main"), '{"slow":1}');
    expect(answer.status).toBe(200);
    await answer.text();
    expect(lab.received("main").map((d) => d.body)).toEqual(['{"slow":1}']);
  });

  it("slow: nothing is answered or recorded before the delay ends", async () => {
    const clock = new StepClock();
    const lab = await start(clock);
    lab.setFault("main", { kind: "slow", delayMs: 5_000 });
    const answer = post(lab.url("main"), '{"slow":2}');
    const timer = await clock.armed();
    expect(timer.delayMs).toBe(5_000);
    expect(lab.received()).toEqual([]);
    timer.fire();
    const response = await answer;
    expect(response.status).toBe(200);
    await response.text();
    expect(lab.received().map((d) => d.body)).toEqual(['{"slow":2}']);
  });

  it("slow: a sender that gives up first gets nothing, and the wait is cancelled", async () => {
    const clock = new StepClock();
    const lab = await start(clock);
    lab.setFault("main", { kind: "slow", delayMs: 5_000 });
    const abort = new AbortController();
    const answer = post(lab.url("main"), "{}", "d-1", abort.signal);
    await clock.armed();
    const cleared = clock.cleared();
    abort.abort();
    await expect(answer).rejects.toThrow();
    await cleared;
    expect(clock.waiting()).toBe(0);
    expect(lab.received()).toEqual([]);
  });

  it.each(["/other", "/hooks/", "/hooks/a/b", "/hooks/%E0%A4%A"])(
    "404 for %s, which is not a hook",
    async (path) => {
      const lab = await start();
      const answer = await fetch(lab.url("main").replace("/hooks/main", path), {
        method: "POST",
        body: "{}",
      });
      expect(answer.status).toBe(404);
      await answer.text();
      expect(lab.received()).toEqual([]);
    },
  );

  it("close() ends keep-alive connections and requests still waiting on a slow answer", async () => {
    const clock = new StepClock();
    const lab = await start(clock);
    const kept = await post(lab.url("main"), "{}");
    await kept.text();
    lab.setFault("main", { kind: "slow", delayMs: 3_600_000 });
    const waiting = post(lab.url("main"), '{"never":1}');
    await clock.armed();
    await lab.close();
    receiver = undefined;
    await expect(waiting).rejects.toThrow();
    expect(clock.waiting()).toBe(0);
    expect(lab.received().map((d) => d.body)).toEqual(["{}"]);
  });
});
