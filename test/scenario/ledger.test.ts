/**
 * The scenario ledger (src/scenario/run/ledger.ts) on readings whose device clock was unset:
 * ingestion stores them at the gateway's receive time, flagged estimated_timestamp (wire-formats
 * "Measurement record"), which on emulated BLE comes a visit's latency after the reading.
 */
import { describe, expect, it } from "vitest";
import { toIsoMicros } from "../../src/core/time.ts";
import type { GeneratedReading } from "../../src/readings/generated.ts";
import { DeviceLedger, type KeyedRecord } from "../../src/scenario/run/ledger.ts";

const AT = Date.UTC(2026, 2, 3, 13, 25);
const weighing = (at: number, kg: number): GeneratedReading => ({
  device: "Vendor Scale",
  duplicate: false,
  timestamp: at,
  timezone_offset: 0,
  records: [{ metric: "weight", value_1: kg, value_2: null, filter_params: null }],
});
const record = (at: number, kg: number, estimated: boolean): KeyedRecord => ({
  metric: "weight",
  timestamp: toIsoMicros(at),
  value_1: kg.toFixed(2),
  value_2: "0.00",
  filter_params: null,
  estimated_timestamp: estimated,
});

describe("DeviceLedger with estimated timestamps", () => {
  it("counts a clock-unset reading stored at its later receive time, once", async () => {
    const first = weighing(AT, 197.6);
    const second = weighing(AT + 86_400_000, 197.6);
    const ledger = new DeviceLedger([first, second]);
    // The device's clock ran 7 minutes ahead: its stamps are not what the API holds.
    ledger.taken(first, AT + 7 * 60_000, Promise.resolve(true));
    ledger.taken(second, AT + 86_400_000 + 7 * 60_000, Promise.resolve(true));
    const counts = await ledger.count([
      record(AT + 124.25, 197.6, true),
      record(AT + 86_400_000 + 131.5, 197.6, true),
    ]);
    expect(counts).toMatchObject({ taken: 2, stored: 2, missing: 0, unexpected: 0 });
  });

  it("does not take an estimated record from before the reading, nor an exact one at another time", async () => {
    const reading = weighing(AT, 197.6);
    const ledger = new DeviceLedger([reading]);
    ledger.taken(reading, AT + 7 * 60_000, Promise.resolve(true));
    const counts = await ledger.count([
      record(AT - 60_000, 197.6, true),
      record(AT + 30_000, 197.6, false),
    ]);
    expect(counts).toMatchObject({ taken: 1, stored: 0, missing: 1, unexpected: 2 });
  });
});

describe("DeviceLedger progress", () => {
  it("counts readings taken as they come, as count() does at the end: re-sends and repeats aside", async () => {
    const first = weighing(AT, 197.6);
    const second = weighing(AT + 86_400_000, 197.4);
    const resend: GeneratedReading = { ...first, duplicate: true };
    const ledger = new DeviceLedger([first, second]);
    expect(ledger.takenCount).toBe(0);
    ledger.taken(first, AT, Promise.resolve(true));
    ledger.taken(resend, AT, Promise.resolve(true));
    expect(ledger.takenCount).toBe(1);
    // The same reading recorded again is still one reading taken.
    ledger.taken(first, AT + 60_000, Promise.resolve(true));
    ledger.taken(second, AT + 86_400_000, Promise.resolve(false));
    expect(ledger.takenCount).toBe(2);
    const counts = await ledger.count([record(AT + 60_000, 197.6, false)]);
    expect(counts).toMatchObject({ taken: 2, stored: 1, lostByDesign: 1, resends: 1 });
  });
});

describe("DeviceLedger with a returned unit", () => {
  it("counts what a replaced unit held as returned with it, unless it was stored after all", async () => {
    const held = weighing(AT, 197.6);
    const uploaded = weighing(AT + 60_000, 197.4);
    const unsetClock = weighing(AT + 120_000, 197.2);
    const resend = { ...held, duplicate: true };
    const ledger = new DeviceLedger([held, uploaded, unsetClock, resend]);
    for (const r of [held, uploaded, unsetClock, resend]) {
      ledger.taken(r, r.timestamp, Promise.resolve(true));
    }
    // Spec 4.3: the unit went back holding all four; two uploads under way reached the platform.
    ledger.returned([held, uploaded, unsetClock, resend]);
    const counts = await ledger.count([
      record(AT + 60_000, 197.4, false),
      record(AT + 120_000 + 95.5, 197.2, true),
    ]);
    expect(counts).toMatchObject({
      taken: 3,
      stored: 2,
      returnedWithUnit: 1,
      lostByDesign: 0,
      missing: 0,
      resends: 0,
      unexpected: 0,
    });
  });
});

describe("DeviceLedger at the end of a run", () => {
  it("counts what a device or an outbox still holds as held at the end, a re-send held too as no re-send", async () => {
    const onDevice = weighing(AT, 197.6);
    const inOutbox = weighing(AT + 60_000, 197.4);
    const uploaded = weighing(AT + 120_000, 197.2);
    const resend = { ...inOutbox, duplicate: true };
    const ledger = new DeviceLedger([onDevice, inOutbox, uploaded, resend]);
    for (const r of [onDevice, inOutbox, uploaded, resend]) {
      ledger.taken(r, r.timestamp, Promise.resolve(true));
    }
    ledger.heldAtEnd(Promise.resolve([onDevice]));
    // The gateway's outbox holds the values it relayed, read back as a new reading object.
    ledger.heldRelayedAtEnd([{ ...inOutbox }]);
    const counts = await ledger.count([record(AT + 120_000, 197.2, false)]);
    expect(counts).toMatchObject({
      taken: 3,
      stored: 1,
      heldAtEnd: 2,
      missing: 0,
      resends: 0,
      unexpected: 0,
    });
  });
});

describe("DeviceLedger with a full store", () => {
  it("counts what a full store or outbox dropped as dropped_full, a dropped re-send as no re-send", async () => {
    const onDevice = weighing(AT, 197.6);
    const relayed = weighing(AT + 60_000, 197.4);
    const stored = weighing(AT + 120_000, 197.2);
    const resend = { ...stored, duplicate: true };
    const ledger = new DeviceLedger([onDevice, relayed, stored, resend]);
    for (const r of [onDevice, relayed, stored, resend]) {
      ledger.taken(r, r.timestamp, Promise.resolve(true));
    }
    ledger.droppedFull([onDevice, resend]);
    // The gateway's outbox drops the values it relayed, read back as a new reading object.
    ledger.droppedRelayed([{ ...relayed }]);
    const counts = await ledger.count([record(AT + 120_000, 197.2, false)]);
    expect(counts).toMatchObject({
      taken: 3,
      stored: 1,
      droppedFull: 2,
      heldAtEnd: 0,
      missing: 0,
      resends: 0,
    });
  });
});
