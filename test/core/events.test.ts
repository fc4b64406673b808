import { describe, expect, it } from "vitest";
import { TypedEvents } from "../../src/core/events.ts";

interface LabEvents {
  reading: { device: string; value: number };
  stopped: undefined;
  [key: string]: unknown;
}

describe("TypedEvents", () => {
  it("delivers payloads to listeners until they unsubscribe; once fires once", () => {
    const events = new TypedEvents<LabEvents>();
    const seen: number[] = [];
    const off = events.on("reading", (r) => seen.push(r.value));
    let stops = 0;
    events.once("stopped", () => stops++);
    events.emit("reading", { device: "bpm", value: 1 });
    off();
    events.emit("reading", { device: "bpm", value: 2 });
    events.emit("stopped", undefined);
    events.emit("stopped", undefined);
    expect(seen).toEqual([1]);
    expect(stops).toBe(1);
  });

  it("reports a throwing listener through onError and still calls the others", () => {
    const events = new TypedEvents<LabEvents>();
    const errors: unknown[] = [];
    const seen: string[] = [];
    events.onError((e) => errors.push(e));
    events.on("reading", () => {
      throw new Error("listener bug");
    });
    events.on("reading", (r) => seen.push(r.device));
    events.emit("reading", { device: "scale", value: 180 });
    expect(seen).toEqual(["scale"]);
    expect((errors[0] as Error).message).toBe("listener bug");
  });
});
