/**
 * A btsnoop capture of a real noble/bleno session, decoded by tshark: the Blood Pressure
 * Measurement fields Wireshark reads out of the capture are the ones the cuff sent.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { BtsnoopWriter, type CaptureSink, fileSink } from "../../src/ble/btsnoop.ts";
import { EmulatedRadio } from "../../src/ble/radio.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { decodeBloodPressureMeasurement } from "../../src/gatt/characteristics/blood-pressure.ts";
import { systemToolOrSkip, TSHARK } from "../support/system-tool.ts";
import { btsnoopRecords } from "./support/btsnoop-records.ts";
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

const START_MS = Date.UTC(2026, 0, 1);

/**
 * A controller whose traffic is captured, with a timestamp of its own per packet (1 ms apart)
 * so a decoder shows the order: each vendor command (OGF 0x3f, OCF 0x100 up: unknown to the
 * controller) names its sequence in its OCF and parameters, and the controller answers it with
 * a Command Status, Unknown HCI Command.
 */
function capturedController() {
  const clock = new VirtualClock({ startMs: START_MS });
  const radio = new EmulatedRadio(clock, new Rng("snoop"));
  let now = START_MS;
  const stamp = (): number => now;
  const controller = radio.controller("gw");
  const command = (seq: number): void => {
    now = START_MS + 1 + seq;
    const packet = Buffer.alloc(8);
    packet[0] = 0x01;
    packet.writeUInt16LE(vendorOpcode(seq), 1);
    packet[3] = 4;
    packet.writeUInt32LE(seq, 4);
    controller.receive(packet);
  };
  return { radio, controller, stamp, command };
}

/** OGF 0x3f, OCF 0x100–0x3ff: past the vendor commands the controller answers (Write_BD_ADDR). */
const vendorOpcode = (seq: number): number => 0xfc00 | (0x100 + (seq % 0x300));

/** Vendor commands written; with their events, New Index and Delete Index: 2N + 2 records. */
const MANY = 50_000;

describe("btsnoop file sink", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "rpmlab-btsnoop-sink-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("holds, once closed, exactly the records written, in order, byte for byte as unbuffered", () => {
    const file = join(dir, "many.btsnoop");
    const { radio, controller, stamp, command } = capturedController();
    const chunks: Buffer[] = [];
    const memory = new BtsnoopWriter(
      { write: (b) => void chunks.push(b), close: () => undefined },
      stamp,
    );
    memory.add(controller);
    radio.captureTo(new BtsnoopWriter(fileSink(file), stamp));
    for (let seq = 0; seq < MANY / 2; seq++) command(seq);
    // synthetic: an ACL packet of the largest length (0xffff), unknown handle: the controller
    // discards it, the capture keeps it; a record larger than the file buffer.
    const acl = Buffer.alloc(5 + 0xffff, 0xa5);
    acl.set([0x02, 0x01, 0x20, 0xff, 0xff]);
    controller.receive(acl);
    for (let seq = MANY / 2; seq < MANY; seq++) command(seq);
    memory.close();
    radio.close();

    const written = readFileSync(file);
    expect(written.equals(Buffer.concat(chunks))).toBe(true);
    const got = btsnoopRecords(written);
    expect(got.length).toBe(2 * MANY + 3);
    expect(got[0]![0]).toBe(0); // New Index
    expect(got.at(-1)![0]).toBe(1); // Delete Index
    let seq = 0;
    for (const [op, payload] of got.slice(1, -1)) {
      if (op === 4) {
        expect(seq).toBe(MANY / 2);
        expect(payload.equals(acl.subarray(1))).toBe(true);
        continue;
      }
      const opcode = vendorOpcode(seq);
      if (op === 2) {
        // Command: opcode, length, then its sequence.
        expect([payload.readUInt16LE(0), payload.readUInt32LE(3)]).toEqual([opcode, seq]);
      } else {
        // Its Command Status (event 0x0f), Unknown HCI Command: the same opcode, then the next.
        expect([op, payload[0], payload[2], payload.readUInt16LE(4)]).toEqual([
          3,
          0x0f,
          0x01,
          opcode,
        ]);
        seq++;
      }
    }
    expect(seq).toBe(MANY);
  });

  it("writes a burst on the event loop's next turn, before close (a capture tailed live)", async () => {
    const file = join(dir, "live.btsnoop");
    const { radio, stamp, command } = capturedController();
    radio.captureTo(new BtsnoopWriter(fileSink(file), stamp));
    for (let seq = 0; seq < 10; seq++) command(seq);
    await new Promise((resolve) => setImmediate(resolve));
    // Header, New Index, then ten commands and their Command Completes.
    expect(btsnoopRecords(readFileSync(file)).map(([op]) => op)).toEqual([
      0,
      ...Array(10).fill([2, 3]).flat(),
    ]);
    radio.close();
    expect(btsnoopRecords(readFileSync(file)).map(([op]) => op)).toEqual([
      0,
      ...Array(10).fill([2, 3]).flat(),
      1, // Delete Index, written by close
    ]);
  });

  it.skipIf(!existsSync("/dev/full"))(
    "names the file when a write fails, at every close, and the radio still powers off",
    () => {
      const { radio, controller, stamp, command } = capturedController();
      const writer = new BtsnoopWriter(fileSink("/dev/full"), stamp);
      radio.captureTo(writer);
      command(0);
      expect(() => radio.close()).toThrow(/btsnoop capture \/dev\/full: records lost.*ENOSPC/);
      expect(() => writer.close()).toThrow(expect.objectContaining({ code: "E_CAPTURE_WRITE" }));
      expect(() => writer.close()).toThrow(/\/dev\/full/);
      // Powered off: a command gets no answer.
      const answers: Buffer[] = [];
      controller.attach((p) => answers.push(p));
      controller.receive(Buffer.from("01030c00", "hex"));
      expect(answers).toEqual([]);
    },
  );

  it("names the file, with E_CAPTURE_WRITE, when it cannot be opened", () => {
    const missing = join(tmpdir(), "rpmlab-no-such-dir", "x.btsnoop");
    expect(() => fileSink(missing)).toThrow(
      expect.objectContaining({
        code: "E_CAPTURE_WRITE",
        message: expect.stringContaining(`btsnoop capture ${missing}: cannot be opened`),
      }),
    );
  });
});

const tshark = systemToolOrSkip("btsnoop capture decoded by tshark", TSHARK);
if (tshark !== undefined) {
  const dir = mkdtempSync(join(tmpdir(), "rpmlab-btsnoop-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  describe("btsnoop capture decoded by tshark", () => {
    it("decodes a capture of many records, once closed, to those records in order", () => {
      const file = join(dir, "many.btsnoop");
      const { radio, stamp, command } = capturedController();
      radio.captureTo(new BtsnoopWriter(fileSink(file), stamp));
      for (let seq = 0; seq < MANY; seq++) command(seq);
      radio.close();
      const out = spawnSync(
        tshark,
        [
          "-r",
          file,
          "-T",
          "fields",
          "-E",
          "separator=,",
          "-e",
          "frame.time_epoch",
          "-e",
          "hci_mon.opcode",
          "-e",
          "bthci_cmd.opcode",
          "-e",
          "bthci_evt.opcode",
        ],
        { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
      );
      expect(out.status, out.stderr).toBe(0);
      const rows = out.stdout.trim().split("\n");
      expect(rows.length).toBe(2 * MANY + 2);
      expect(rows[0]!.split(",")[1]).toBe("0"); // New Index
      expect(rows.at(-1)!.split(",")[1]).toBe("1"); // Delete Index
      for (let seq = 0; seq < MANY; seq++) {
        const opcode = `0x${vendorOpcode(seq).toString(16)}`;
        // µs since the epoch: the record's own stamp, START_MS + 1 + seq ms.
        const at = `${(START_MS + 1 + seq) / 1000}`;
        const [cmdAt, cmdOp, cmd] = rows[1 + 2 * seq]!.split(",");
        const [evtAt, evtOp, , evt] = rows[2 + 2 * seq]!.split(",");
        expect([Number(cmdAt), cmdOp, cmd]).toEqual([Number(at), "2", opcode]);
        expect([Number(evtAt), evtOp, evt]).toEqual([Number(at), "3", opcode]);
      }
    });

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

describe("btsnoop capture of controllers that come and go", () => {
  it("records a released controller's Delete Index when its host leaves, not at the capture's end", () => {
    // A TCP host of `rpmlab controller --listen --btsnoop` disconnecting releases its controller.
    const chunks: Buffer[] = [];
    const clock = new VirtualClock({ startMs: START_MS });
    const radio = new EmulatedRadio(clock, new Rng("snoop"));
    radio.captureTo(
      new BtsnoopWriter({ write: (b) => void chunks.push(b), close: () => {} }, () => clock.now()),
    );
    const first = radio.controller("tcp-host-1");
    clock.runSync({ until: START_MS + 1000 });
    radio.release(first);
    const afterRelease = btsnoopRecords(Buffer.concat(chunks)).map(([op]) => op);
    expect(afterRelease).toEqual([0, 1]); // New Index, Delete Index: written already
    clock.runSync({ until: START_MS + 5000 });
    radio.close();
    const file = Buffer.concat(chunks);
    const deleteAt = 16 + 24 + 16; // after the header and the New Index record
    expect(file.readUInt32BE(deleteAt + 8)).toBe(1); // index 0, Delete Index
    expect(file.readBigInt64BE(deleteAt + 16)).toBe(
      BigInt(START_MS + 1000) * 1000n + 0x00dcddb30f2f8000n,
    );
    expect(btsnoopRecords(file).map(([op]) => op)).toEqual([0, 1]); // once, not again at close
  });
});
