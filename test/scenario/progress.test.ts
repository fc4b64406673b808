import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadScenario } from "../../src/scenario/load.ts";
import { createProgress, finishable, type ProgressState } from "../../src/scenario/progress.ts";
import { runScenario } from "../../src/scenario/runner.ts";

const H = 3_600_000;
const D = 24 * H;
const START = Date.UTC(2026, 0, 5);

function sink(isTTY: boolean, columns?: number) {
  const writes: string[] = [];
  return {
    writes,
    out: {
      isTTY,
      ...(columns === undefined ? {} : { columns }),
      write(s: string) {
        writes.push(s);
        return true;
      },
    },
  };
}

function state(virtualNow: number, n = 0): ProgressState {
  return {
    virtualNow,
    startMs: START,
    endMs: START + 30 * D,
    readings: n,
    webhooks: Math.floor(n / 2),
    faults: n > 0 ? 1 : 0,
  };
}

describe("progress off a terminal", () => {
  it("writes one plain line per virtual day crossed, and a last line when done", () => {
    const { out, writes } = sink(false);
    const progress = createProgress(out);
    progress.update(state(START));
    progress.update(state(START + 5 * H, 10));
    expect(writes).toEqual([]);
    progress.update(state(START + D, 40));
    progress.update(state(START + D + H, 50));
    // A jump over several days still names each of them.
    progress.update(state(START + 3 * D + 1, 1234));
    progress.done(state(START + 30 * D, 5000));
    const lines = writes.join("").split("\n");
    expect(lines.slice(0, 4)).toEqual([
      "day 1/30 2026-01-06 readings 40 webhooks 20 faults 1",
      "day 2/30 2026-01-07 readings 1234 webhooks 617 faults 1",
      "day 3/30 2026-01-08 readings 1234 webhooks 617 faults 1",
      "day 4/30 2026-01-09 readings 5000 webhooks 2500 faults 1",
    ]);
    expect(lines.slice(-4)).toEqual([
      "day 29/30 2026-02-03 readings 5000 webhooks 2500 faults 1",
      "day 30/30 2026-02-04 readings 5000 webhooks 2500 faults 1",
      "done readings 5000 webhooks 2500 faults 1",
      "",
    ]);
    expect(lines).toHaveLength(32);
    expect(writes.every((w) => w.endsWith("\n"))).toBe(true);
  });

  it("never goes back, and never writes a day past the end", () => {
    const { out, writes } = sink(false);
    const { update, done } = createProgress(out);
    update(state(START + 2 * D));
    update(state(START + D));
    update(state(START + 40 * D));
    done(state(START + 40 * D));
    const days = writes.filter((w) => w.startsWith("day ")).map((w) => w.split(" ")[1]);
    expect(days).toEqual(Array.from({ length: 30 }, (_, i) => `${i + 1}/30`));
  });
});

describe("progress on a terminal", () => {
  it("redraws one line in place, at most once per 100 wall ms, and always when done", () => {
    const { out, writes } = sink(true);
    let wall = 0;
    const progress = createProgress(out, { wallMs: () => wall });
    progress.update(state(START + 3 * D + 9.5 * H, 1234));
    wall = 50;
    progress.update(state(START + 4 * D, 1300));
    wall = 99.9;
    progress.update(state(START + 4 * D, 1301));
    expect(writes).toHaveLength(1);
    expect(writes[0]).toBe(
      "\r2026-01-08 09:30 [##------------------]  11.3% readings 1234 webhooks 617 faults 1\x1b[K",
    );
    wall = 100;
    progress.update(state(START + 15 * D, 2000));
    expect(writes).toHaveLength(2);
    expect(writes[1]).toContain("2026-01-20 00:00 [##########----------]  50.0% readings 2000");
    wall = 120;
    progress.done(state(START + 30 * D, 4000));
    expect(writes.slice(2)).toEqual([
      "\r2026-02-04 00:00 [####################] 100.0% readings 4000 webhooks 2000 faults 1\x1b[K",
      "\n",
    ]);
    expect(writes.every((w) => !w.slice(0, -1).includes("\n"))).toBe(true);
  });

  it("cuts the line to the terminal width so it never wraps", () => {
    const { out, writes } = sink(true, 40);
    createProgress(out, { wallMs: () => 0 }).update(state(START + D, 99));
    expect(writes[0]).toBe(
      `\r${"2026-01-06 00:00 [#-------------------]   3.3%".slice(0, 39)}\x1b[K`,
    );
  });

  it("clamps outside the run and treats a run of no length as done", () => {
    const { out, writes } = sink(true);
    const progress = createProgress(out, { wallMs: () => 0 });
    progress.done({ ...state(START - H), endMs: START });
    expect(writes[0]).toContain("[####################] 100.0%");
    const other = sink(true);
    createProgress(other.out, { wallMs: () => 0 }).update(state(START - H));
    expect(other.writes[0]).toContain("[--------------------]   0.0%");
  });
});

describe("finishable progress", () => {
  it("ends the line with the last state it was given, once", () => {
    const { out, writes } = sink(true, 200);
    let wall = 0;
    const progress = finishable(createProgress(out, { wallMs: () => wall }));
    progress.update(state(START + D, 10));
    wall = 50;
    // Throttled: not drawn, but remembered for finish().
    progress.update(state(START + 2 * D, 20));
    expect(writes).toHaveLength(1);
    progress.finish();
    progress.finish();
    expect(writes).toHaveLength(3);
    expect(writes[1]!.startsWith("\r2026-01-07 00:00 ")).toBe(true);
    expect(writes[1]!.endsWith(" readings 20 webhooks 10 faults 1\x1b[K")).toBe(true);
    expect(writes[2]).toBe("\n");
  });

  it("writes nothing when the run ended before any update", () => {
    const { out, writes } = sink(false);
    finishable(createProgress(out)).finish();
    expect(writes).toEqual([]);
  });
});

describe("a run's progress off a terminal", () => {
  it("counts the scenario's own days: the drain after its end adds none", async () => {
    const { out, writes } = sink(false);
    const progress = finishable(createProgress(out));
    // One day long; its cuff keeps readings out of range, so the run drains a day past its end.
    const file = fileURLToPath(new URL("../fixtures/scenarios/undrained.yaml", import.meta.url));
    const report = await runScenario(loadScenario(file), { progress });
    expect(report.virtual.end).toBe("2026-01-06T00:00:00.000000Z");
    // Still on the cuff when the drain gave up: held at the end, not missing.
    expect(report.counts.readings.held_at_end).toBeGreaterThan(0);
    expect(report.counts.readings.missing).toBe(0);
    progress.finish();
    const lines = writes.join("").trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^day 1\/1 \d{4}-\d\d-\d\d readings \d+ webhooks \d+ faults \d+$/);
    expect(lines[1]).toMatch(
      new RegExp(
        `^done readings ${report.counts.readings.taken} webhooks \\d+ faults ${report.faults}$`,
      ),
    );
  }, 60_000);
});
