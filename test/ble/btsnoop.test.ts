/**
 * A btsnoop capture of a real noble/bleno session, decoded by tshark: the Blood Pressure
 * Measurement fields Wireshark reads out of the capture are the ones the cuff sent.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BtsnoopWriter, type CaptureSink, fileSink } from "../../src/ble/btsnoop.ts";
import { EmulatedRadio } from "../../src/ble/radio.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { decodeBloodPressureMeasurement } from "../../src/gatt/characteristics/blood-pressure.ts";
import { tsharkOrSkip } from "../support/tshark.ts";
import { catalogue, HostLab, readingsFor } from "./support/lab.ts";

describe("btsnoop writer", () => {
  it("writes the btsnoop header for the monitor datalink, a New Index per controller, then records", () => {
    const chunks: Buffer[] = [];
    const sink: CaptureSink = { write: (b) => void chunks.push(b), close: () => undefined };
    const clock = new VirtualClock({ startMs: Date.UTC(2026, 0, 1) });
    const radio = new EmulatedRadio(clock, new Rng("snoop"));
    const writer = new BtsnoopWriter(sink, () => clock.now());
    radio.captureTo(writer);
    const c = radio.controller("gw");
    c.receive(Buffer.from("01030c00", "hex")); // Reset
    radio.close();
    const file = Buffer.concat(chunks);
    expect(file.subarray(0, 8).toString("latin1")).toBe("btsnoop\0");
    expect([file.readUInt32BE(8), file.readUInt32BE(12)]).toEqual([1, 2001]);
    // synthetic: New Index (opcode 0) for index 0, then Command (2), Event (3), Delete Index (1).
    const ops: number[] = [];
    for (let at = 16; at < file.length; ) {
      const len = file.readUInt32BE(at + 4);
      ops.push(file.readUInt32BE(at + 8) & 0xffff);
      expect(file.readBigInt64BE(at + 16)).toBe(
        BigInt(Date.UTC(2026, 0, 1)) * 1000n + 0x00dcddb30f2f8000n,
      );
      at += 24 + len;
    }
    expect(ops).toEqual([0, 2, 3, 1]);
  });
});

const tshark = tsharkOrSkip("btsnoop capture decoded by tshark");
if (tshark !== undefined) {
  const dir = mkdtempSync(join(tmpdir(), "rpmlab-btsnoop-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  describe("btsnoop capture decoded by tshark", () => {
    it("shows the Blood Pressure Measurement the cuff indicated, field by field", async () => {
      const file = join(dir, "bp.btsnoop");
      const lab = new HostLab();
      try {
        lab.radio.captureTo(new BtsnoopWriter(fileSink(file), () => lab.clock.now()));
        const profile = catalogue.get("Vendor BPM - S");
        const device = await lab.device({ profile: profile.name, serial: "BPSNOOP1" });
        const gateway = await lab.gateway();
        const [reading] = readingsFor(profile, "btsnoop", 1);
        expect(await device.measure(reading!)).toBe("stored");
        await gateway.visit({
          whitelist: [{ sensorCode: "10" }],
          lastSequences: {},
          lingerMs: 300,
          scanTimeoutMs: 10_000,
        });
      } finally {
        await lab.close();
      }
      expect(readFileSync(file).length).toBeGreaterThan(1000);

      const sentValue = lab.values.find((v) => v.uuid === "2A35")!.value;
      const sent = decodeBloodPressureMeasurement(sentValue);
      const out = spawnSync(
        tshark,
        [
          "-r",
          file,
          "-Y",
          "btatt.opcode == 0x1d && btatt.blood_pressure_measurement.flags",
          "-T",
          "fields",
          "-E",
          "separator=,",
          "-e",
          "btatt.blood_pressure_measurement.compound_value.systolic.mmhg",
          "-e",
          "btatt.blood_pressure_measurement.compound_value.diastolic.mmhg",
          "-e",
          "btatt.blood_pressure_measurement.pulse_rate",
        ],
        { encoding: "utf8" },
      );
      expect(out.status, out.stderr).toBe(0);
      const rows = out.stdout.trim().split("\n").filter(Boolean);
      // The indication appears twice: sent on the cuff's controller, received on the gateway's.
      expect(rows.length).toBe(2);
      for (const row of rows) {
        const [systolic, diastolic, pulse] = row.split(",").map(Number);
        expect([systolic, diastolic, pulse]).toEqual([
          sent.systolic,
          sent.diastolic,
          sent.pulseRate,
        ]);
      }
    });
  });
}
