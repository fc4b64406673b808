import { afterEach, describe, expect, it, vi } from "vitest";
import { SystemClock } from "../../src/core/clock.ts";

const DAY_MS = 86_400_000;

afterEach(() => {
  vi.useRealTimers();
});

describe("SystemClock", () => {
  it("waits out a delay past Node's 2^31 − 1 ms timer limit (rpmlab device --every 2592000) instead of firing at once", () => {
    vi.useFakeTimers();
    const clock = new SystemClock();
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(1), 30 * DAY_MS);
    vi.advanceTimersByTime(25 * DAY_MS);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(5 * DAY_MS - 1);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual([1]);
  });

  it("cancels such a delay after its first step too", () => {
    vi.useFakeTimers();
    const clock = new SystemClock();
    const fired: number[] = [];
    const handle = clock.setTimeout(() => fired.push(1), 60 * DAY_MS);
    vi.advanceTimersByTime(30 * DAY_MS);
    clock.clearTimeout(handle);
    vi.advanceTimersByTime(60 * DAY_MS);
    expect(fired).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
