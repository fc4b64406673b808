/**
 * The virtual device's GATT behaviour without a host stack: RACP procedures (GSS §3.178),
 * stored-measurement flush, Current Time and clock drift.
 */
import { describe, expect, it } from "vitest";
import type { CharacteristicDef } from "../../src/ble/hosts/peripheral.ts";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { BleDevice } from "../../src/devices/ble-device.ts";
import {
  currentTimeAt,
  decodeCurrentTime,
  encodeCurrentTime,
} from "../../src/gatt/characteristics/current-time.ts";
import { decodeGlucoseFeature } from "../../src/gatt/characteristics/glucose-feature.ts";
import { decodePlxFeatures } from "../../src/gatt/characteristics/plx-features.ts";
import { decodeRacp, encodeRacp, type RacpMessage } from "../../src/gatt/characteristics/racp.ts";
import { VENDOR } from "../../src/gatt/uuids.ts";
import { decodeVendorRecord } from "../../src/gatt/vendor/record.ts";
import { readingsFor } from "../ble/support/lab.ts";

const catalogue = Catalogue.load();
const START = Date.UTC(2026, 0, 1);

function rig(
  profileName: string,
  options: { driftPpm?: number; clockOffsetMs?: number; lastSequence?: number } = {},
) {
  const profile = catalogue.get(profileName);
  const clock = new VirtualClock({ startMs: START });
  const device = new BleDevice({ profile, clock, serial: "SN000001", ...options });
  const chars = new Map<string, CharacteristicDef>();
  for (const s of device.services()) for (const c of s.characteristics) chars.set(c.uuid, c);
  const sent: Array<{ uuid: string; value: Buffer }> = [];
  const subscribeAll = () => {
    for (const c of chars.values())
      c.subscribe?.(async (v) => void sent.push({ uuid: c.uuid, value: Buffer.from(v) }), 512);
  };
  const subscribe = (uuid: string) =>
    chars.get(uuid)!.subscribe!(async (v) => void sent.push({ uuid, value: Buffer.from(v) }), 512);
  const racp = async (m: RacpMessage): Promise<RacpMessage[]> => {
    sent.length = 0;
    expect(chars.get("2A52")!.write!(Buffer.from(encodeRacp(m)))).toBe(0);
    for (let i = 0; i < 50; i++) await Promise.resolve();
    return sent.filter((s) => s.uuid === "2A52").map((s) => decodeRacp(s.value));
  };
  return { profile, clock, device, chars, sent, subscribe, subscribeAll, racp };
}

describe("BleDevice RACP server", () => {
  it("reports all, ≥ n, the count, deletes, and says no records found", async () => {
    const r = rig("Vendor Glucometer");
    for (const reading of readingsFor(r.profile, "racp", 3))
      expect(await r.device.measure(reading)).toBe("stored");
    r.subscribeAll();
    expect(
      await r.racp({ opCode: "report_number_of_stored_records", operator: "all_records" }),
    ).toEqual([{ opCode: "number_of_stored_records_response", count: 3 }]);
    const all = await r.racp({ opCode: "report_stored_records", operator: "all_records" });
    expect(all).toEqual([
      { opCode: "response_code", requestOpCode: "report_stored_records", responseCode: "success" },
    ]);
    expect(r.sent.filter((s) => s.uuid === "2A18").map((s) => s.value.readUInt16LE(1))).toEqual([
      1, 2, 3,
    ]);
    await r.racp({
      opCode: "report_stored_records",
      operator: "greater_than_or_equal_to",
      filter: { type: "sequence_number", value: 3 },
    });
    expect(r.sent.filter((s) => s.uuid === "2A18").map((s) => s.value.readUInt16LE(1))).toEqual([
      3,
    ]);
    expect(await r.racp({ opCode: "delete_stored_records", operator: "all_records" })).toEqual([
      { opCode: "response_code", requestOpCode: "delete_stored_records", responseCode: "success" },
    ]);
    expect(await r.racp({ opCode: "report_stored_records", operator: "all_records" })).toEqual([
      {
        opCode: "response_code",
        requestOpCode: "report_stored_records",
        responseCode: "no_records_found",
      },
    ]);
  });

  it("counts as unsent (and holds) what no central has had: reported records, and those a ≥ n request passes over", async () => {
    const r = rig("Vendor Glucometer");
    const taken = readingsFor(r.profile, "unsent", 3);
    for (const reading of taken) await r.device.measure(reading);
    r.subscribeAll();
    expect(r.device.unsent).toBe(3);
    // What a unit replaced now would take back to the vendor: the readings as it took them.
    expect(r.device.held()).toEqual(taken);
    // The central holds 1 and 2 (it asks from 3 on) and gets 3: nothing is left for it.
    await r.racp({
      opCode: "report_stored_records",
      operator: "greater_than_or_equal_to",
      filter: { type: "sequence_number", value: 3 },
    });
    expect(r.device.store.size).toBe(3);
    expect(r.device.unsent).toBe(0);
    expect(r.device.held()).toEqual([]);
    r.device.disconnected();
    const [next] = readingsFor(r.profile, "unsent-next", 1);
    expect(await r.device.measure(next!)).toBe("stored");
    expect(r.device.unsent).toBe(1);
    expect(r.device.held()).toEqual([next]);
  });

  it("when its store is full, drops the oldest record and says which reading no central will get", async () => {
    const r = rig("Vendor Glucometer");
    const taken = readingsFor(r.profile, "full", r.device.store.capacity + 2);
    const dropped: unknown[] = [];
    r.device.onDropped = (reading) => dropped.push(reading);
    for (const reading of taken) await r.device.measure(reading);
    expect(r.device.store.size).toBe(r.device.store.capacity);
    expect(dropped).toEqual(taken.slice(0, 2));
    expect(r.device.held()).toEqual(taken.slice(2));
  });

  it("counts past the wrap of its 16-bit sequence: ≥ n takes the records after it, and what it passed over is had", async () => {
    const r = rig("Vendor Glucometer", { lastSequence: 0xfffd });
    for (const reading of readingsFor(r.profile, "wrap", 4)) await r.device.measure(reading);
    r.subscribeAll();
    const sent = () => r.sent.filter((s) => s.uuid === "2A18").map((s) => s.value.readUInt16LE(1));
    await r.racp({
      opCode: "report_stored_records",
      operator: "greater_than_or_equal_to",
      filter: { type: "sequence_number", value: 0xffff },
    });
    expect(sent()).toEqual([0xffff, 1, 2]);
    expect(r.device.unsent).toBe(0);
    // The gateway's next ask after 0xFFFF is ≥ 0: the records after the wrap only.
    await r.racp({
      opCode: "report_stored_records",
      operator: "greater_than_or_equal_to",
      filter: { type: "sequence_number", value: 0 },
    });
    expect(sent()).toEqual([1, 2]);
  });

  it("gives a central that had part of a multi-record reading (the link dropped mid-send) the rest when it asks ≥ n, not count it had", async () => {
    const r = rig("Vendor Inhaler Sensor");
    const [reading] = readingsFor(r.profile, "partial", 1);
    expect(reading!.records.length).toBeGreaterThan(3);
    // A central that gets the first two Vendor Records of the reading, then loses the link.
    const record = r.chars.get(VENDOR.record)!;
    let delivered = 0;
    record.subscribe!(async (v) => {
      if (delivered === 2) throw new Error("link dropped");
      delivered++;
      r.sent.push({ uuid: VENDOR.record, value: Buffer.from(v) });
    }, 512);
    r.subscribe("2A52");
    expect(await r.device.measure(reading!)).toBe("stored");
    const had = r.sent.map((s) => s.value.readUInt16LE(1));
    expect(had).toEqual([1, 2]);
    r.device.disconnected();
    // Next visit: it holds 1 and 2, so it asks for the records from 3 on (the gateway's ask).
    r.subscribeAll();
    expect(
      await r.racp({
        opCode: "report_stored_records",
        operator: "greater_than_or_equal_to",
        filter: { type: "sequence_number", value: 3 },
      }),
    ).toEqual([
      { opCode: "response_code", requestOpCode: "report_stored_records", responseCode: "success" },
    ]);
    const got = r.sent.filter((s) => s.uuid === VENDOR.record).map((s) => s.value.readUInt16LE(1));
    const rest = reading!.records.slice(2).map((_, i) => i + 3);
    expect(got).toEqual(rest);
    const profile = r.profile;
    const metrics = r.sent
      .filter((s) => s.uuid === VENDOR.record)
      .map((s) => decodeVendorRecord(s.value, profile).record);
    expect(metrics).toEqual(reading!.records.slice(2));
    expect(r.device.unsent).toBe(0);
  });

  it("refuses an RACP write before indications are enabled (CCCD improperly configured: GLS 1.0 0x81, PLXS and CSS 0xFD)", async () => {
    const report = Buffer.from(
      encodeRacp({ opCode: "report_stored_records", operator: "all_records" }),
    );
    expect(rig("Vendor Glucometer").chars.get("2A52")!.write!(report)).toBe(0x81);
    expect(rig("Vendor Pulse Ox").chars.get("2A52")!.write!(report)).toBe(0xfd);
  });

  it("refuses an RACP write while a report runs (procedure already in progress: GLS 1.0 0x80, PLXS and CSS 0xFE)", async () => {
    for (const [name, code] of [
      ["Vendor Glucometer", 0x80],
      ["Vendor Pulse Ox", 0xfe],
    ] as const) {
      const r = rig(name);
      for (const reading of readingsFor(r.profile, "racp-busy", 2)) await r.device.measure(reading);
      r.subscribeAll();
      const report = Buffer.from(
        encodeRacp({ opCode: "report_stored_records", operator: "all_records" }),
      );
      expect(r.chars.get("2A52")!.write!(report)).toBe(0);
      await Promise.resolve();
      expect(r.chars.get("2A52")!.write!(report)).toBe(code);
      for (let i = 0; i < 50; i++) await Promise.resolve();
    }
  });

  it("refuses an RACP write while the Glucose Measurement CCCD is off (GLS 1.0 0x81): the report would have nowhere to go", async () => {
    const r = rig("Vendor Glucometer");
    for (const reading of readingsFor(r.profile, "racp-cccd", 2)) await r.device.measure(reading);
    r.subscribe("2A52");
    const report = Buffer.from(
      encodeRacp({ opCode: "report_stored_records", operator: "all_records" }),
    );
    expect(r.chars.get("2A52")!.write!(report)).toBe(0x81);
    // With the measurement on and its context off, the records go out without it.
    r.subscribe("2A18");
    expect(r.chars.get("2A52")!.write!(report)).toBe(0);
    for (let i = 0; i < 50; i++) await Promise.resolve();
    expect(r.sent.map((s) => s.uuid)).toEqual(["2A18", "2A18", "2A52"]);
  });

  it("answers a User Facing Time filter it does not keep with operand_not_supported (0x09), a reversed range with invalid_operand", async () => {
    const r = rig("Vendor Glucometer");
    for (const reading of readingsFor(r.profile, "uft", 2)) await r.device.measure(reading);
    r.subscribeAll();
    const time = { year: 2026, month: 1, day: 1, hours: 0, minutes: 0, seconds: 0 };
    const code = (answers: RacpMessage[]) =>
      answers.map((a) => ("responseCode" in a ? a.responseCode : a.opCode));
    expect(
      code(
        await r.racp({
          opCode: "report_stored_records",
          operator: "greater_than_or_equal_to",
          filter: { type: "user_facing_time", value: time },
        }),
      ),
    ).toEqual(["operand_not_supported"]);
    expect(
      code(
        await r.racp({
          opCode: "report_stored_records",
          operator: "within_range_of",
          range: { type: "sequence_number", min: 2, max: 1 },
        }),
      ),
    ).toEqual(["invalid_operand"]);
  });

  it("announces in its Feature what its measurements carry (PLX: storage, timestamp, PAI; glucose: high-low detection)", () => {
    const plx = rig("Vendor Pulse Ox");
    const features = decodePlxFeatures(plx.chars.get("2A60")!.read!() as Uint8Array);
    expect(features.supported).toMatchObject({
      spotCheckMeasurementStorage: true,
      spotCheckTimestamp: true,
      pulseAmplitudeIndex: true,
    });
    const glucometer = rig("Vendor Glucometer");
    const glucose = decodeGlucoseFeature(glucometer.chars.get("2A51")!.read!() as Uint8Array);
    expect(glucose.sensorResultHighLowDetection).toBe(true);
  });

  it("answers an unknown op code with op_code_not_supported", async () => {
    const r = rig("Vendor Glucometer");
    r.subscribeAll();
    r.sent.length = 0;
    expect(r.chars.get("2A52")!.write!(Buffer.from([0x09, 0x01]))).toBe(0);
    for (let i = 0; i < 20; i++) await Promise.resolve();
    const answer = decodeRacp(r.sent.find((s) => s.uuid === "2A52")!.value);
    expect(answer).toMatchObject({
      opCode: "response_code",
      responseCode: "op_code_not_supported",
    });
  });

  it("answers a write of an op code alone (no operator) with Invalid Operator (0x03), as GLS servers do", async () => {
    const r = rig("Vendor Glucometer");
    r.subscribeAll();
    // GSS §3.178: the Operator is a mandatory field of every request; one that is missing is
    // no valid operator for the op code (0x03 Invalid Operator), not a bad operand (0x05).
    for (const written of ["01", "02", "03", "04"]) {
      r.sent.length = 0;
      expect(r.chars.get("2A52")!.write!(Buffer.from(written, "hex"))).toBe(0);
      for (let i = 0; i < 20; i++) await Promise.resolve();
      const answers = r.sent.filter((s) => s.uuid === "2A52");
      expect(
        answers.map((s) => Buffer.from(s.value).toString("hex")),
        written,
      ).toEqual([`0600${written}03`]);
    }
  });

  it("answers the server's own op codes (5, 6) written to it with op_code_not_supported, whatever operator or operand follows", async () => {
    const r = rig("Vendor Glucometer");
    r.subscribeAll();
    // GSS §3.178.1: 5 (Number of Stored Records Response) and 6 (Response Code) go from the
    // server only; a collector that writes one gets Op Code Not Supported, not a code about
    // the operator or operand of a request it cannot make.
    for (const written of ["0500", "0501", "050001", "06000101", "0601", "06"]) {
      r.sent.length = 0;
      expect(r.chars.get("2A52")!.write!(Buffer.from(written, "hex"))).toBe(0);
      for (let i = 0; i < 20; i++) await Promise.resolve();
      const [answer] = r.sent.filter((s) => s.uuid === "2A52").map((s) => decodeRacp(s.value));
      expect(answer, written).toEqual({
        opCode: "response_code",
        requestOpCode: written.startsWith("05")
          ? "number_of_stored_records_response"
          : "response_code",
        responseCode: "op_code_not_supported",
      });
    }
  });

  it("ends a report it cannot finish with Procedure Not Completed (0x08), not silence: a record longer than the central's ATT_MTU − 3", async () => {
    const r = rig("Vendor Inhaler Sensor");
    const taken = readingsFor(r.profile, "racp-mtu", 3);
    for (const reading of taken) await r.device.measure(reading);
    // As BlenoPeripheral sends at ATT_MTU 23 (a central that never exchanged MTU): a value of
    // more than 20 octets is refused; an inhaler record carries up to 36.
    for (const c of r.chars.values()) {
      c.subscribe?.(async (v) => {
        if (v.length > 20) throw new Error(`${c.uuid}: a ${v.length}-octet value exceeds 20`);
        r.sent.push({ uuid: c.uuid, value: Buffer.from(v) });
      }, 20);
    }
    const long = r.device.store.all().some((rec) => rec.values.some((v) => v.value.length > 20));
    expect(long).toBe(true);
    // GSS §3.178.4: 0x08, "unable to complete a procedure for any reason"; the central waited
    // for a response that never came, and the report held the RACP till the link dropped.
    expect(await r.racp({ opCode: "report_stored_records", operator: "all_records" })).toEqual([
      {
        opCode: "response_code",
        requestOpCode: "report_stored_records",
        responseCode: "procedure_not_completed",
      },
    ]);
    expect(
      await r.racp({ opCode: "report_number_of_stored_records", operator: "all_records" }),
    ).toEqual([{ opCode: "number_of_stored_records_response", count: 3 }]);
  });
});

describe("BleDevice without RACP", () => {
  it("flushes stored measurements, with their extras, to a central subscribed everywhere (BLS)", async () => {
    const r = rig("Vendor BPM - S");
    for (const reading of readingsFor(r.profile, "flush", 2)) await r.device.measure(reading);
    expect(r.device.store.size).toBe(2);
    r.subscribeAll();
    for (let i = 0; i < 20; i++) await Promise.resolve();
    expect(r.sent.filter((s) => s.uuid === "2A35")).toHaveLength(2);
    expect(r.device.store.size).toBe(0);
  });

  it("serves a central that listens to the measurement alone, as a phone app does: stored ones flushed, live ones sent, extras left out", async () => {
    const r = rig("Vendor BPM - S");
    let listening = 0;
    r.device.onListening = () => listening++;
    for (const reading of readingsFor(r.profile, "phone", 3).slice(0, 2))
      expect(await r.device.measure(reading)).toBe("stored");
    r.subscribe("2A35");
    for (let i = 0; i < 20; i++) await Promise.resolve();
    expect(listening).toBe(1);
    expect(r.sent.map((s) => s.uuid)).toEqual(["2A35", "2A35"]);
    expect(r.device.store.size).toBe(0);
    const [live] = readingsFor(r.profile, "phone-live", 1);
    expect(await r.device.measure(live!)).toBe("sent");
    expect(r.sent.map((s) => s.uuid)).toEqual(["2A35", "2A35", "2A35"]);
    // Subscribing to an extra afterwards does not announce listening again.
    r.subscribe("2A19");
    expect(listening).toBe(1);
  });

  it("loses readings out of range when the profile does not store offline", async () => {
    const r = rig("Vendor Peak Flow Meter");
    const [reading] = readingsFor(r.profile, "lost", 1);
    expect(await r.device.measure(reading!)).toBe("lost");
  });
});

describe("device clock", () => {
  it("drifts until the central writes Current Time, then reads back what was written", () => {
    const r = rig("Vendor BPM - S", { driftPpm: 100, clockOffsetMs: 0 });
    r.clock.runSync({ until: START + 10 * 86_400_000 });
    expect(r.device.clock.error()).toBe(86_400); // 100 ppm of 10 days
    const now = r.clock.now();
    expect(r.chars.get("2A2B")!.write!(Buffer.from(encodeCurrentTime(currentTimeAt(now))))).toBe(0);
    expect(Math.abs(r.device.clock.error())).toBeLessThan(4);
    expect(Buffer.from(r.chars.get("2A2B")!.read!())).toEqual(
      Buffer.from(encodeCurrentTime(currentTimeAt(r.device.clock.now()))),
    );
  });

  it("refuses a Current Time of the wrong length with Invalid Attribute Value Length, a bad date with Value Not Allowed", () => {
    const r = rig("Vendor BPM - S", { driftPpm: 0, clockOffsetMs: 0 });
    const write = r.chars.get("2A2B")!.write!;
    const good = Buffer.from(encodeCurrentTime(currentTimeAt(r.clock.now())));
    expect(write(good.subarray(0, 3))).toBe(0x0d);
    expect(write(Buffer.concat([good, Buffer.from([0])]))).toBe(0x0d);
    const month13 = Buffer.from(good);
    month13[2] = 13;
    expect(write(month13)).toBe(0x13);
    expect(r.device.counts.timeWrites).toBe(0);
  });

  it("refuses a Current Time whose year, month or day is 0 (unknown) with Value Not Allowed, not set the clock from a date it does not know", () => {
    const r = rig("Vendor BPM - S", { driftPpm: 0, clockOffsetMs: 0 });
    const time = r.chars.get("2A2B")!;
    const good = Buffer.from(encodeCurrentTime(currentTimeAt(r.clock.now())));
    const before = Buffer.from(time.read!());
    for (const [at, zero] of [
      [0, [0, 0]],
      [2, [0]],
      [3, [0]],
    ] as const) {
      const unknown = Buffer.from(good);
      unknown.set(zero, at);
      expect(time.write!(unknown), `byte ${at}`).toBe(0x13);
    }
    expect(r.device.counts.timeWrites).toBe(0);
    expect(Buffer.from(time.read!())).toEqual(before);
  });

  it("notifies a subscribed central of the Current Time it set (CTS 1.1 §3.1: Notify mandatory), Adjust Reason manual update", async () => {
    const r = rig("Vendor BPM - S", { driftPpm: 0, clockOffsetMs: 3_600_000 });
    const time = r.chars.get("2A2B")!;
    expect(time.properties).toContain("notify");
    const written = Buffer.from(encodeCurrentTime(currentTimeAt(r.clock.now())));
    // Without a subscription nothing is sent.
    expect(time.write!(written)).toBe(0);
    await Promise.resolve();
    expect(r.sent).toEqual([]);

    r.subscribe("2A2B");
    const bad = Buffer.from(written);
    bad[2] = 13;
    expect(time.write!(bad)).toBe(0x13);
    expect(time.write!(written)).toBe(0);
    // After the Write Response, as the RACP's indications follow theirs.
    expect(r.sent).toEqual([]);
    await Promise.resolve();
    expect(r.sent.map((s) => s.uuid)).toEqual(["2A2B"]);
    const notified = decodeCurrentTime(r.sent[0]!.value);
    expect(notified.dateTime).toEqual(decodeCurrentTime(written).dateTime);
    expect(notified.adjustReason).toMatchObject({
      manualTimeUpdate: true,
      externalReferenceTimeUpdate: false,
    });

    // CCCD off, or the central gone: nothing more.
    time.unsubscribe!();
    expect(time.write!(written)).toBe(0);
    r.subscribe("2A2B");
    r.device.disconnected();
    expect(time.write!(written)).toBe(0);
    await Promise.resolve();
    expect(r.sent).toHaveLength(1);
  });
});
