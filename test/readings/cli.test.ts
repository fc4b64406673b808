import { describe, expect, it } from "vitest";
import type { CliIo } from "../../src/cli/io.ts";
import { main } from "../../src/cli/main.ts";
import type { ApiMeasurement } from "../../src/readings/render.ts";

class BufferIo implements CliIo {
  stdout = "";
  stderr = "";
  out(text: string): void {
    this.stdout += text.endsWith("\n") ? text : `${text}\n`;
  }
  err(text: string): void {
    this.stderr += text.endsWith("\n") ? text : `${text}\n`;
  }
}

async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = new BufferIo();
  const code = await main(["node", "rpmlab", "readings", ...args], io);
  return { code, out: io.stdout, err: io.stderr };
}

const json = (text: string) => JSON.parse(text) as ApiMeasurement[];

describe("rpmlab readings", () => {
  it("prints a table of the device's records for the patient model", async () => {
    const { code, out, err } = await run(
      "Vendor BPM - Wide Range",
      "--patient",
      "hypertensive",
      "--days",
      "3",
    );
    expect(code).toBe(0);
    expect(err).toBe("");
    const lines = out.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^timestamp\s+metric\s+value_1\s+value_2\s+filter_params$/);
    expect(lines[1]).toMatch(
      /^2026-01-0\dT\d\d:\d\d:00\.000000Z\s+blood_pressure\s+\d+\.00\s+\d+\.00\s+measurement_index=\d+$/,
    );
    expect(lines.length).toBeGreaterThan(10);
  });

  it("prints the same output for the same seed, other output for another", async () => {
    const a = await run(
      "Vendor Scale",
      "--patient",
      "heart-failure",
      "--seed",
      "9",
      "--days",
      "10",
    );
    const b = await run(
      "Vendor Scale",
      "--patient",
      "heart-failure",
      "--seed",
      "9",
      "--days",
      "10",
    );
    const c = await run(
      "Vendor Scale",
      "--patient",
      "heart-failure",
      "--seed",
      "10",
      "--days",
      "10",
    );
    expect(a.out).toBe(b.out);
    expect(a.out).not.toBe(c.out);
  });

  it("prints the records as the API renders them with --json", async () => {
    const { code, out } = await run(
      "Vendor Glucometer",
      "--patient",
      "type2-diabetic",
      "--days",
      "2",
      "--json",
    );
    expect(code).toBe(0);
    const records = json(out);
    expect(records.length).toBeGreaterThan(4);
    expect(Object.keys(records[0]!)).toEqual([
      "id",
      "metric_type",
      "metric",
      "device_name",
      "hwi_device_id",
      "patient_id",
      "hardware_uuid",
      "sensor_code",
      "value_1",
      "value_2",
      "created",
      "timestamp",
      "timezone_offset",
      "estimated_timestamp",
      "filter_params",
    ]);
    expect(records.map((r) => r.id)).toEqual(records.map((_, i) => i + 1));
    expect(records[0]).toMatchObject({
      device_name: "Vendor Glucometer",
      sensor_code: "12",
      timezone_offset: -8,
    });
  });

  it("drops re-sent readings with a note on stderr, and shows them with --include-duplicates", async () => {
    const args = [
      "Vendor Pulse Ox",
      "--patient",
      "copd",
      "--days",
      "30",
      "--json",
      "--duplicate-rate",
      "0.1",
    ];
    const deduped = await run(...args);
    const all = await run(...args, "--include-duplicates");
    const dropped = Number(/dropped (\d+) re-sent reading/.exec(deduped.err)?.[1]);
    expect(dropped).toBeGreaterThan(0);
    expect(deduped.err.trim().split("\n")).toHaveLength(1);
    expect(all.err).toBe("");
    // Each pulse-ox reading is four records.
    expect(json(all.out).length - json(deduped.out).length).toBe(dropped * 4);
    const keys = json(deduped.out).map(
      (r) => `${r.metric}/${r.timestamp}/${String(r.filter_params?.measurement_index)}`,
    );
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("explains why a fetal doppler on a patient who is not pregnant gives only invalid events", async () => {
    const off = await run("Vendor Fetal Doppler", "--patient", "normal", "--days", "2", "--json");
    expect(off.code).toBe(0);
    expect(new Set(json(off.out).map((r) => r.metric))).toEqual(new Set(["invalid_event"]));
    expect(off.err).toContain('"normal" is not pregnant');
    const pregnant = await run("Vendor Fetal Doppler", "--patient", "pregnancy", "--days", "2");
    expect(pregnant.code).toBe(0);
    expect(pregnant.err).not.toContain("not pregnant");
    expect(pregnant.out).toContain("fetal_pulse");
  });

  it("accepts a legacy device name and a start instant", async () => {
    const { code, out } = await run(
      "Vendor BPM - L",
      "--patient",
      "normal",
      "--start",
      "2025-06-01T00:00:00Z",
      "--days",
      "2",
      "--json",
    );
    expect(code).toBe(0);
    const records = json(out);
    expect(records[0]!.device_name).toBe("Vendor BPM - Wide Range");
    expect(records.every((r) => r.timestamp >= "2025-06-01T" && r.timestamp < "2025-06-03T")).toBe(
      true,
    );
  });

  it("names an unknown device and lists the valid ones", async () => {
    const { code, err, out } = await run("Vendor Toaster", "--patient", "normal");
    expect(code).not.toBe(0);
    expect(out).toBe("");
    expect(err).toContain('unknown device "Vendor Toaster"');
    expect(err).toContain("Vendor Scale");
  });

  it("names an unknown patient model and lists the valid ones", async () => {
    const { code, err } = await run("Vendor Scale", "--patient", "athlete");
    expect(code).not.toBe(0);
    expect(err).toContain('unknown patient model "athlete"');
    expect(err).toContain("heart-failure");
  });

  it("takes --seed as every command and a scenario file do: 7.0 is 7, and text is a seed", async () => {
    const args = ["Vendor Scale", "--patient", "normal", "--days", "2", "--json"];
    const seven = await run(...args, "--seed", "7");
    expect(seven.code).toBe(0);
    expect((await run(...args, "--seed", "7.0")).out).toBe(seven.out);
    // Text seeds, as rpmlab device --seed and a file's seed: "ward-3" take them.
    const text = await run(...args, "--seed", "ward-3");
    expect(text.code).toBe(0);
    expect(text.out).not.toBe(seven.out);
    expect((await run(...args, "--seed", "-1")).code).toBe(0);
  });

  it.each([
    ["--days", "0"],
    ["--days", "ten"],
    ["--days", "1.5"],
    ["--seed", "1.5"],
    ["--seed", "12345678901234567"],
    ["--start", "yesterday"],
    ["--duplicate-rate", "1"],
    ["--duplicate-rate", "0x0"],
    ["--duplicate-rate", "0b0"],
    ["--duplicate-rate", ""],
  ])("rejects %s %s with a clear error", async (option, value) => {
    const { code, err } = await run("Vendor Scale", "--patient", "normal", option, value);
    expect(code).toBe(2);
    expect(err).toContain(option);
    expect(err).toContain(`"${value}"`);
  });

  it("refuses a start whose days run past 9999-12-31, which no four-digit year writes", async () => {
    const args = ["Vendor Scale", "--patient", "normal", "--start", "9999-12-29T00:00:00Z"];
    const { code, err } = await run(...args, "--days", "3");
    expect(code).toBe(2);
    expect(err).toMatch(/--start with --days 3 runs past 9999-12-31/);
    expect((await run(...args, "--days", "1")).code).toBe(0);
  });

  it("requires --patient", async () => {
    const { code, err } = await run("Vendor Scale");
    expect(code).toBe(2);
    expect(err).toContain("--patient");
  });

  it("documents every option in --help", async () => {
    const { code, out } = await run("--help");
    expect(code).toBe(0);
    for (const option of [
      "<device>",
      "--patient",
      "--seed",
      "--days",
      "--start",
      "--json",
      "--include-duplicates",
      "--duplicate-rate",
    ]) {
      expect(out).toContain(option);
    }
    expect(out).toContain("2026-01-01T00:00:00Z");
  });
});
