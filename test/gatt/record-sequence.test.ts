/** Record sequence numbers on the 16-bit circle devices count on (they wrap from 0xFFFF to 1). */
import { describe, expect, it } from "vitest";
import { sequenceAtOrAfter } from "../../src/gatt/record-sequence.ts";

describe("sequenceAtOrAfter", () => {
  it("orders numbers as counted, across the wrap, up to half the circle", () => {
    expect(sequenceAtOrAfter(5, 5)).toBe(true);
    expect(sequenceAtOrAfter(6, 5)).toBe(true);
    expect(sequenceAtOrAfter(4, 5)).toBe(false);
    // 0xFFFF, then 1: after the wrap comes after.
    expect(sequenceAtOrAfter(1, 0xffff)).toBe(true);
    expect(sequenceAtOrAfter(0xffff, 1)).toBe(false);
    // A central's "≥ 0xFFFF + 1" (0) takes what followed the wrap, not what preceded it.
    expect(sequenceAtOrAfter(2, 0)).toBe(true);
    expect(sequenceAtOrAfter(0xfffe, 0)).toBe(false);
    // Half the circle apart: behind.
    expect(sequenceAtOrAfter(0x8005, 5)).toBe(false);
    expect(sequenceAtOrAfter(0x8004, 5)).toBe(true);
  });
});
