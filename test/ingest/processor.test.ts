import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MS_PER_HOUR, PAST_YEAR_9999_MS, parseIso } from "../../src/core/time.ts";
import type { VirtualClock } from "../../src/core/virtual-clock.ts";
import {
  decodeBloodPressureMeasurement,
  encodeBloodPressureMeasurement,
} from "../../src/gatt/characteristics/blood-pressure.ts";
import {
  decodeGlucoseMeasurement,
  encodeGlucoseMeasurement,
  SENSOR_STATUS,
} from "../../src/gatt/characteristics/glucose-measurement.ts";
import {
  decodePlxSpotCheckMeasurement,
  encodePlxSpotCheckMeasurement,
} from "../../src/gatt/characteristics/plx-measurement.ts";
import {
  decodeWeightMeasurement,
  encodeWeightMeasurement,
} from "../../src/gatt/characteristics/weight.ts";
import { mappingFor } from "../../src/gatt/mapping.ts";
import type { MessageOutcome } from "../../src/ingest/events.ts";
import { MessageProcessor } from "../../src/ingest/processor.ts";
import { INGEST_RETENTION_MS, ingestRetention } from "../../src/ingest/retention.ts";
import { MAX_PAYLOAD_BYTES } from "../../src/mqtt/payload.ts";
import { topicOf } from "../../src/mqtt/topics.ts";
import type { gatewayUplink } from "../../src/mqtt/uplink.ts";
import type { GeneratedReading } from "../../src/readings/generated.ts";
import type { Store } from "../../src/store/store.ts";
import {
  activateCellular,
  activateForPatient,
  asRecord,
  catalogue,
  deviceForPatient,
  expectedRecords,
  inbound,
  memoryStore,
  RECEIVED,
  readingsOf,
  senderFor,
  uplinkMessage,
} from "./fixtures.ts";

const bpm = senderFor(catalogue.get("Vendor BPM - Wide Range"), 1);
const inhaler = senderFor(catalogue.get("Vendor Inhaler Sensor"), 2);
const cellScale = senderFor(catalogue.get("Vendor Cellular Scale"), 3);

describe("MessageProcessor: one batch, one transaction", () => {
  let store: Store;
  let clock: VirtualClock;
  let processor: MessageProcessor;

  beforeEach(async () => {
    ({ store, clock } = await memoryStore());
    processor = new MessageProcessor({ store, catalogue });
  });
  afterEach(() => store.close());

  const run = async (...messages: { topic: string; payload: Uint8Array }[]) =>
    processor.process(messages.map((m) => inbound(m, clock.now())));
  /** The rows a batch announced, as the store keeps them. */
  const rowsOf = async (result: { stored: readonly { id: number }[] }) =>
    Promise.all(result.stored.map(async ({ id }) => (await store.measurements.get(id))!));
  const only = async (message: { topic: string; payload: Uint8Array }): Promise<MessageOutcome> =>
    (await run(message)).outcomes[0]!;

  it("stores an activated device's readings with account, patient, raw bytes and receipt time", async () => {
    const { account, device } = await activateForPatient(store, bpm);
    const readings = readingsOf(bpm, 3, 0).slice(0, 3);
    const result = await run(uplinkMessage(bpm, "m-1", readings));
    expect(result.outcomes).toEqual([
      {
        kind: "uplink",
        messageId: "m-1",
        stored: result.stored.length,
        duplicates: 0,
        deadLetter: null,
      },
    ]);
    const rows = await rowsOf(result);
    expect(rows.map(asRecord)).toEqual(expectedRecords(readings));
    for (const row of rows) {
      expect(row).toMatchObject({
        accountId: account.id,
        deviceId: device.id,
        deviceName: "Vendor BPM - Wide Range",
        patientExternalId: "P-1",
        source: bpm.source,
        hardwareUuid: bpm.hardwareUuid,
        sensorCode: "10",
        messageId: "m-1",
        created: RECEIVED,
        estimatedTimestamp: false,
      });
      expect(row.measurementIndex).toBe(row.filterParams?.measurement_index);
    }
    // Raw bytes per record: battery from Battery Level, the rest from the measurement.
    const values = mappingFor(bpm.profile).encode(readings[0]!, bpm.profile, 0);
    const first = rows.filter((r) => r.timestamp === readings[0]!.timestamp);
    for (const row of first) {
      const uuid = row.metric === "battery_percentage" ? "2A19" : "2A35";
      expect(row.characteristicUuid).toBe(uuid);
      expect(row.raw).toEqual(values.find((v) => v.uuid === uuid)!.value);
    }
    const gateway = await store.gateways.get(bpm.hardwareUuid);
    expect(gateway?.lastMeasurement).toBe(Math.max(...readings.map((r) => r.timestamp)));
  });

  it("sets a gateway's last_measurement no later than the reading arrived: a device clock set ahead does not pin it in the future", async () => {
    const readings = readingsOf(bpm, 70, 0);
    const ahead = readings.filter((r) => r.timestamp > RECEIVED).slice(0, 1);
    expect(ahead).toHaveLength(1);
    const result = await run(uplinkMessage(bpm, "m-ahead", ahead));
    expect(result.stored.length).toBeGreaterThan(0);
    // The record keeps the device's stamp; the gateway's last measurement is when it came.
    expect((await rowsOf(result))[0]!.timestamp).toBe(ahead[0]!.timestamp);
    expect((await store.gateways.get(bpm.hardwareUuid))?.lastMeasurement).toBe(RECEIVED);
  });

  it("stores nothing twice: a redelivered message, or a reading re-sent in a new message", async () => {
    const readings = readingsOf(bpm, 3, 0).slice(0, 2);
    const message = uplinkMessage(bpm, "m-1", readings);
    const first = await run(message);
    expect(first.stored.length).toBeGreaterThan(0);
    expect(await only(message)).toEqual({ kind: "redelivered", messageId: "m-1" });
    // Both in one batch: the second copy is the redelivery.
    const pair = await run(
      uplinkMessage(bpm, "m-2", readings),
      uplinkMessage(bpm, "m-2", readings),
    );
    expect(pair.outcomes).toEqual([
      {
        kind: "uplink",
        messageId: "m-2",
        stored: 0,
        duplicates: first.stored.length,
        deadLetter: null,
      },
      { kind: "redelivered", messageId: "m-2" },
    ]);
    // Message ids are the sender's: another gateway may use the same one.
    const other = senderFor(bpm.profile, 9);
    expect((await only(uplinkMessage(other, "m-1", readings))).kind).toBe("uplink");
    expect(
      (await store.measurements.listOrphans({ hardwareUuid: bpm.hardwareUuid, sensorCode: "10" }))
        .length,
    ).toBe(first.stored.length);
  });

  it("keeps orphan readings (device_id null) and gives them to the device activated later", async () => {
    const readings = readingsOf(inhaler, 10, 0).slice(0, 4);
    const result = await run(uplinkMessage(inhaler, "i-1", readings));
    expect(result.stored.length).toBeGreaterThan(0);
    expect(result.stored.every((r) => r.deviceId === null && r.accountId === null)).toBe(true);
    const rows = await rowsOf(result);
    expect(rows.every((r) => r.sensorId === inhaler.sensorId)).toBe(true);
    expect(rows.map((r) => r.deviceLogIndex)).toEqual(
      rows.map((r) => r.filterParams?.device_log_index),
    );
    const cell = await run(
      uplinkMessage(cellScale, "c-1", readingsOf(cellScale, 4, 0).slice(0, 2)),
    );
    expect(
      (await rowsOf(cell)).every((r) => r.deviceId === null && r.source === cellScale.hardwareUuid),
    ).toBe(true);
    // A cellular device has no gateway: no gateway row appears for its IMEI.
    expect(await store.gateways.get(cellScale.hardwareUuid)).toBeNull();

    const { device } = await activateForPatient(store, inhaler, "P-7");
    // What device activation does (src/fulfilment/hardware-binding.ts).
    const attached = await store.measurements.attachOrphans(
      { hardwareUuid: inhaler.hardwareUuid, sensorCode: "25", sensorId: inhaler.sensorId },
      {
        accountId: device.accountId,
        deviceId: device.id,
        deviceName: device.name,
        patientExternalId: "P-7",
      },
    );
    expect(attached.map((r) => r.id).sort()).toEqual(result.stored.map((r) => r.id).sort());
    expect(attached.every((r) => r.deviceId === device.id && r.patientExternalId === "P-7")).toBe(
      true,
    );
    // Later readings go straight to the device.
    const later = await run(uplinkMessage(inhaler, "i-2", readingsOf(inhaler, 10, 0).slice(4, 6)));
    expect(later.stored.every((r) => r.deviceId === device.id)).toBe(true);
  });

  it("gives the device a reading another gateway relayed first as an orphan, when its own gateway relays it too", async () => {
    const { device } = await activateForPatient(store, bpm, "P-3");
    // A second gateway in range with the device's address on its whitelist (a replaced one).
    const neighbour = { ...bpm, hardwareUuid: "A1B2C3D4E099" };
    const readings = readingsOf(bpm, 1, 0).slice(0, 1);
    const first = await run(uplinkMessage(neighbour, "n-1", readings));
    expect(first.stored.length).toBeGreaterThan(0);
    expect(first.stored.every((r) => r.deviceId === null)).toBe(true);
    const own = await run(uplinkMessage(bpm, "n-1", readings));
    expect(own.outcomes[0]).toMatchObject({ stored: first.stored.length, duplicates: 0 });
    // Announced again, the device's now: its measurement webhooks get the reading.
    expect(own.stored.map((r) => r.id)).toEqual(first.stored.map((r) => r.id));
    const rows = await rowsOf(own);
    expect(rows.every((r) => r.deviceId === device.id && r.patientExternalId === "P-3")).toBe(true);
  });

  /** `readings` as taken from `clock.now()` on, a minute apart (the generator's values). */
  const takenFromNow = (readings: readonly GeneratedReading[]) =>
    readings.map((r, i) => ({ ...r, timestamp: clock.now() + i * 60_000 }));
  const hour = () => clock.runSync({ until: clock.now() + 3_600_000 });

  it("gives a reading relayed after an unlink to the device that held the slot when it was taken, not to the next one", async () => {
    const { account, device: first } = await activateForPatient(store, bpm, "P-A");
    hour();
    // Taken while P-A's cuff held the slot; queued on the gateway through the unlink.
    const late = takenFromNow(readingsOf(bpm, 3, 0).slice(0, 2));
    hour();
    await store.devices.unlinkGateway(account.id, bpm.hardwareUuid);
    const afterUnlink = await run(uplinkMessage(bpm, "late-1", late.slice(0, 1)));
    hour();
    const second = await deviceForPatient(store, account.id, bpm, "P-B");
    const afterNext = await run(uplinkMessage(bpm, "late-2", late.slice(1), 8));
    for (const row of await rowsOf({ stored: [...afterUnlink.stored, ...afterNext.stored] })) {
      expect(row).toMatchObject({ deviceId: first.id, patientExternalId: "P-A" });
    }
    // Taken after the unlink, or by a gateway whose clock went back years (a reset): the
    // device in the slot now.
    hour();
    const [fresh] = takenFromNow(readingsOf(bpm, 3, 0).slice(2, 3));
    const reset = { ...fresh!, timestamp: Date.UTC(2000, 0, 1) };
    for (const [id, reading] of [
      ["now-1", fresh!],
      ["reset-1", reset],
    ] as const) {
      const stored = (await run(uplinkMessage(bpm, id, [reading], 16))).stored;
      expect(stored.length).toBeGreaterThan(0);
      expect(stored.every((r) => r.deviceId === second.id)).toBe(true);
    }
  });

  it("keeps a late reading with the patient its device had when it left the slot, not the one it has now", async () => {
    const { account, device } = await activateForPatient(store, bpm, "P-A");
    hour();
    const late = takenFromNow(readingsOf(bpm, 3, 0).slice(0, 1));
    hour();
    await store.devices.unlinkGateway(account.id, bpm.hardwareUuid);
    const other = await store.patients.create(account.id, { externalId: "P-OTHER" });
    await store.devices.update(account.id, device.id, { patientId: other.id });
    const stored = await rowsOf(await run(uplinkMessage(bpm, "late-1", late)));
    expect(stored.length).toBeGreaterThan(0);
    for (const row of stored) {
      expect(row).toMatchObject({ deviceId: device.id, patientExternalId: "P-A" });
    }
  });

  it("gives a reading relayed late by a replaced gateway to the device now on the new one", async () => {
    const { account, device } = await activateForPatient(store, bpm, "P-A");
    hour();
    const late = takenFromNow(readingsOf(bpm, 3, 0).slice(0, 2));
    hour();
    await store.devices.replaceHardware(account.id, bpm.hardwareUuid, "0F0E0D0C0B0A");
    const result = await run(uplinkMessage(bpm, "late-1", late));
    expect(result.stored.length).toBeGreaterThan(0);
    expect(result.stored.every((r) => r.deviceId === device.id)).toBe(true);
  });

  it("gives the readings an old unit sends while its replacement is in the mail to the device, until the device is unlinked", async () => {
    const account = await store.accounts.create({
      clientDomain: "clinic",
      environment: "development",
    });
    const device = await deviceForPatient(store, account.id, cellScale, "P-C");
    hour();
    // The new unit ships (spec 4.3): the device moves to its IMEI; the patient still has the old.
    await store.devices.replaceHardware(account.id, cellScale.hardwareUuid, "356938035643899");
    hour();
    const [meanwhile, afterUnlink] = takenFromNow(readingsOf(cellScale, 2, 0).slice(0, 2));
    const kept = await run(uplinkMessage(cellScale, "old-1", [meanwhile!]));
    expect(kept.deadLetters).toEqual([]);
    expect(kept.stored.length).toBeGreaterThan(0);
    for (const row of await rowsOf(kept)) {
      expect(row).toMatchObject({
        deviceId: device.id,
        accountId: account.id,
        patientExternalId: "P-C",
        source: cellScale.hardwareUuid,
      });
    }
    // Unlinked (the patient unenrolled): what the old unit sends after is nobody's.
    hour();
    await store.devices.unlinkDevice(account.id, device.id);
    const orphaned = await run(uplinkMessage(cellScale, "old-2", [afterUnlink!]));
    expect(orphaned.stored.length).toBeGreaterThan(0);
    for (const row of await rowsOf(orphaned)) {
      expect(row).toMatchObject({ deviceId: null, accountId: null, patientExternalId: null });
    }
  });

  it("gives a reading an old gateway takes after a replacement moved its cuff to the device, and to the next device activated on that gateway once there is one", async () => {
    const { account, device } = await activateForPatient(store, bpm, "P-A");
    hour();
    await store.devices.replaceHardware(account.id, bpm.hardwareUuid, "0F0E0D0C0B0A");
    hour();
    const [first, second] = takenFromNow(readingsOf(bpm, 3, 0).slice(0, 2));
    const kept = await run(uplinkMessage(bpm, "old-1", [first!]));
    expect(kept.stored.length).toBeGreaterThan(0);
    for (const row of await rowsOf(kept)) {
      expect(row).toMatchObject({ deviceId: device.id, patientExternalId: "P-A" });
    }
    hour();
    const next = await deviceForPatient(store, account.id, bpm, "P-B");
    const taken = await run(uplinkMessage(bpm, "old-2", takenFromNow([second!]), 8));
    for (const row of await rowsOf(taken)) {
      expect(row).toMatchObject({ deviceId: next.id, patientExternalId: "P-B" });
    }
  });

  it("refuses for its device_type a reading of another known type than the device activated on its IMEI", async () => {
    await activateCellular(store, cellScale);
    const cellBpm = {
      ...senderFor(catalogue.get("Vendor Cellular BPM"), 3),
      hardwareUuid: cellScale.hardwareUuid,
      source: cellScale.hardwareUuid,
    };
    const result = await run(uplinkMessage(cellBpm, "b-1", readingsOf(cellBpm, 2, 0).slice(0, 1)));
    expect(result.stored).toEqual([]);
    expect(result.deadLetters.map((d) => d.reason)).toEqual([
      `readings.0: E_INGEST_UNKNOWN_DEVICE: device_type "Vendor Cellular BPM" is not the type of the device activated on IMEI ${cellScale.hardwareUuid}, a "Vendor Cellular Scale"`,
    ]);
    // A name the catalogue does not know is still decoded as the activated device's type.
    const renamed = JSON.parse(
      uplinkMessage(cellScale, "s-1", readingsOf(cellScale, 2, 0).slice(0, 1)).payload.toString(),
    );
    renamed.device_type = "Vendor Cellular Scale Pro";
    const scale = await run({
      topic: topicOf("cell/up", cellScale.hardwareUuid),
      payload: Buffer.from(JSON.stringify(renamed)),
    });
    expect(scale.deadLetters).toEqual([]);
    expect(scale.stored.length).toBeGreaterThan(0);
  });

  it("never gives an IMEI's orphans of one type to a device of another type activated there", async () => {
    const cellGlucometer = {
      ...senderFor(catalogue.get("Vendor Cellular Glucometer"), 3),
      hardwareUuid: cellScale.hardwareUuid,
      source: cellScale.hardwareUuid,
    };
    const glucose = await run(
      uplinkMessage(cellGlucometer, "g-1", readingsOf(cellGlucometer, 2, 0).slice(0, 2)),
    );
    const scale = await run(
      uplinkMessage(cellScale, "s-1", readingsOf(cellScale, 2, 0).slice(0, 1)),
    );
    // One kept before orphans had a type (migration 0009): it goes as before.
    const legacy = await store.measurements.insertMany([
      {
        ...(await store.measurements.get(scale.stored[0]!.id))!,
        metric: "weight",
        timestamp: 1,
        deviceName: null,
      },
    ]);
    const { device } = await activateForPatient(store, cellScale, "P-9");
    const attached = await store.measurements.attachOrphans(
      { hardwareUuid: cellScale.hardwareUuid, sensorCode: null, deviceName: device.name },
      {
        accountId: device.accountId,
        deviceId: device.id,
        deviceName: device.name,
        patientExternalId: "P-9",
      },
    );
    expect(attached.map((r) => r.id).sort()).toEqual(
      [...scale.stored, ...legacy.inserted].map((r) => r.id).sort(),
    );
    expect(glucose.stored.length).toBeGreaterThan(0);
    for (const { id } of glucose.stored) {
      expect((await store.measurements.get(id))?.deviceId).toBeNull();
    }
  });

  it("places orphans of a gateway associated with an account in that account", async () => {
    const account = await store.accounts.create({ clientDomain: "c2", environment: "production" });
    await store.gateways.associate(account.id, bpm.hardwareUuid);
    const result = await run(uplinkMessage(bpm, "m-1", readingsOf(bpm, 2, 0).slice(0, 1)));
    expect(result.stored.every((r) => r.accountId === account.id && r.deviceId === null)).toBe(
      true,
    );
  });

  it("a refused message sent again (QoS 1 after a lost PUBACK) is one dead letter, not two", async () => {
    const good = uplinkMessage(bpm, "again", readingsOf(bpm, 1, 0));
    const envelope = JSON.parse(good.payload.toString()) as Record<string, unknown>;
    const offSchema = {
      topic: good.topic,
      payload: Buffer.from(JSON.stringify({ ...envelope, extra: 1 })),
    };
    const first = await run(offSchema);
    expect(first.outcomes[0]).toMatchObject({ kind: "dead_letter" });
    // Later, and twice within one batch: the same sender and message id are the same message.
    const again = await run(offSchema, offSchema);
    expect(again.outcomes.map((o) => o.kind)).toEqual(["redelivered", "redelivered"]);
    expect((await store.deadLetters.list({}, { count: true })).total).toBe(1);
    const [letter] = (await store.deadLetters.list({})).rows;
    expect(letter).toMatchObject({ messageId: "again", holdsClaim: true });
  });

  it("dead-letters what it cannot use, with the reason, and stores the rest", async () => {
    const good = uplinkMessage(bpm, "ok", readingsOf(bpm, 2, 0).slice(0, 1));
    const text = (value: unknown) => Buffer.from(JSON.stringify(value));
    const envelope = JSON.parse(good.payload.toString()) as ReturnType<typeof gatewayUplink>;
    const withReading = (change: (r: (typeof envelope.readings)[0]) => void, id: string) => {
      const copy = structuredClone(envelope);
      copy.message_id = id;
      change(copy.readings[0]!);
      return { topic: good.topic, payload: text(copy) };
    };
    const cases: [{ topic: string; payload: Uint8Array }, RegExp][] = [
      [{ topic: "rpm/v1/gw/nope/up", payload: good.payload }, /^E_MQTT_TOPIC: .*level 4 "nope"/],
      [{ topic: topicOf("gw/down", bpm.hardwareUuid), payload: good.payload }, /sent by the lab/],
      [{ topic: good.topic, payload: Buffer.from("{") }, /^E_MQTT_PAYLOAD: .*not JSON/],
      [{ topic: good.topic, payload: text({ ...envelope, v: 3, message_id: "v3" }) }, /v is 3/],
      [
        { topic: topicOf("gw/up", "A1B2C3D4E099"), payload: good.payload },
        /gateway_uuid A1B2C3D4E001 differs/,
      ],
      [
        withReading((r) => (r.sensor_code = "99"), "bad-code"),
        /readings\.0: E_INGEST_UNKNOWN_DEVICE: sensor_code 99/,
      ],
      [
        withReading((r) => (r.values[0]!.value_b64 = "HgA="), "short"),
        /readings\.0: E_CODEC_TRUNCATED: .*byte/,
      ],
      [
        withReading((r) => (r.values[0]!.uuid = "2A9D"), "wrong-char"),
        /readings\.0: E_CODEC_MAPPING/,
      ],
    ];
    const result = await run(good, ...cases.map(([m]) => m));
    expect(result.outcomes[0]).toMatchObject({ kind: "uplink", deadLetter: null });
    expect(result.stored.length).toBeGreaterThan(0);
    cases.forEach(([message, why], i) => {
      const outcome = result.outcomes[i + 1]!;
      const letter =
        outcome.kind === "dead_letter"
          ? outcome.deadLetter
          : outcome.kind === "uplink"
            ? outcome.deadLetter
            : null;
      expect(letter?.reason, message.topic).toMatch(why);
      expect(letter?.topic).toBe(message.topic);
      expect(Buffer.from(letter!.payload)).toEqual(Buffer.from(message.payload));
      expect(letter?.received).toBe(RECEIVED);
    });
    // Message ids are kept where the payload still names one.
    expect(result.deadLetters.map((d) => d.messageId)).toEqual([
      "ok",
      null,
      null,
      "v3",
      "ok",
      "bad-code",
      "short",
      "wrong-char",
    ]);
    expect((await store.deadLetters.list({}, { count: true })).total).toBe(cases.length);
  });

  it("stores the good readings of a batched message and dead-letters the bad one by index", async () => {
    const readings = readingsOf(bpm, 3, 0).slice(0, 3);
    const message = uplinkMessage(bpm, "mixed", readings);
    const envelope = JSON.parse(message.payload.toString());
    envelope.readings[1].values[0].value_b64 = Buffer.from([0xff]).toString("base64");
    const outcome = await only({
      topic: message.topic,
      payload: Buffer.from(JSON.stringify(envelope)),
    });
    expect(outcome).toMatchObject({ kind: "uplink", messageId: "mixed" });
    if (outcome.kind !== "uplink") throw new Error("unreachable");
    expect(outcome.stored).toBe(expectedRecords([readings[0]!, readings[2]!]).length);
    expect(outcome.deadLetter?.reason).toMatch(/^readings\.1: E_CODEC_/);
  });

  it("stores the good readings of a message whose other readings are off the schema (a wrong type, a field too large), naming each bad one by index and field", async () => {
    const readings = readingsOf(bpm, 3, 0).slice(0, 4);
    const message = uplinkMessage(bpm, "typed", readings);
    const envelope = JSON.parse(message.payload.toString());
    envelope.readings[1].sequence = "41";
    envelope.readings[3].values[0].value_b64 = Buffer.alloc(513).toString("base64");
    const payload = Buffer.from(JSON.stringify(envelope));
    const outcome = await only({ topic: message.topic, payload });
    expect(outcome).toMatchObject({ kind: "uplink", messageId: "typed" });
    if (outcome.kind !== "uplink") throw new Error("unreachable");
    expect(outcome.stored).toBe(expectedRecords([readings[0]!, readings[2]!]).length);
    expect(outcome.deadLetter?.reason).toMatch(
      /^readings\.1: E_MQTT_PAYLOAD: sequence: .*; readings\.3: E_MQTT_PAYLOAD: values\.0\.value_b64: must decode to at most 512 bytes/,
    );
    expect(Buffer.from(outcome.deadLetter!.payload)).toEqual(payload);
    // The same bytes again (a QoS 1 redelivery) store nothing more and keep no second letter.
    expect(await only({ topic: message.topic, payload })).toMatchObject({ kind: "redelivered" });
    expect((await store.deadLetters.list({}, { count: true })).total).toBe(1);
  });

  it("keeps the first MiB of a payload refused for its size (an external broker passes up to 256 MiB), the reason saying so", async () => {
    const envelope = JSON.parse(
      uplinkMessage(bpm, "big", readingsOf(bpm, 1, 0)).payload.toString(),
    );
    const text = JSON.stringify({ ...envelope, padding: "x".repeat(3 * MAX_PAYLOAD_BYTES) });
    const payload = Buffer.from(text);
    const outcome = await only({ topic: topicOf("gw/up", bpm.hardwareUuid), payload });
    if (outcome.kind !== "dead_letter") throw new Error(`expected a dead letter: ${outcome.kind}`);
    expect(outcome.deadLetter.reason).toBe(
      `E_MQTT_PAYLOAD: rpm/v1/gw/{gateway_uuid}/up: ${payload.byteLength} bytes, more than ${MAX_PAYLOAD_BYTES}; the dead letter keeps its first ${MAX_PAYLOAD_BYTES}`,
    );
    expect(Buffer.from(outcome.deadLetter.payload)).toEqual(payload.subarray(0, MAX_PAYLOAD_BYTES));
    expect(outcome.deadLetter.messageId).toBe("big");
  });

  it("dead-letters a reading whose device time is past the year 9999, which no API read could write", async () => {
    const readings = readingsOf(bpm, 3, 0).slice(0, 2);
    const message = uplinkMessage(bpm, "late", readings);
    // The device's clock says 9999-12-31 23:59:59 at UTC−7: 10000-01-01T06:59:59Z.
    const late = {
      ...readings[1]!,
      timestamp: PAST_YEAR_9999_MS + 7 * 3_600_000 - 1000,
      timezone_offset: -7,
    };
    const envelope = JSON.parse(message.payload.toString());
    envelope.readings[1].values = mappingFor(bpm.profile)
      .encode(late, bpm.profile, 8)
      .map((v) => ({ uuid: v.uuid, value_b64: Buffer.from(v.value).toString("base64") }));
    const outcome = await only({
      topic: message.topic,
      payload: Buffer.from(JSON.stringify(envelope)),
    });
    if (outcome.kind !== "uplink") throw new Error("unreachable");
    expect(outcome.stored).toBe(expectedRecords([readings[0]!]).length);
    expect(outcome.deadLetter?.reason).toBe(
      "readings.1: E_MQTT_PAYLOAD: the reading's time, the device's time in UTC, is past 9999-12-31T23:59:59.999999Z",
    );
  });

  it("dead-letters a reading stored at its receive time when that is before year 1, which no time filter reaches", async () => {
    const readings = readingsOf(bpm, 3, 0).slice(0, 2);
    const message = uplinkMessage(bpm, "year-0", readings);
    const envelope = JSON.parse(message.payload.toString());
    envelope.readings[1].clock_unset = true;
    envelope.readings[1].received_at = "0000-12-31T23:59:59Z";
    const outcome = await only({
      topic: message.topic,
      payload: Buffer.from(JSON.stringify(envelope)),
    });
    if (outcome.kind !== "uplink") throw new Error("unreachable");
    expect(outcome.stored).toBe(expectedRecords([readings[0]!]).length);
    expect(outcome.deadLetter?.reason).toBe(
      "readings.1: E_MQTT_PAYLOAD: the reading's time, received_at, is before 0001-01-01T00:00:00Z",
    );
  });

  it("requires the sensor id of types with several devices per gateway, and a known cellular type", async () => {
    const message = uplinkMessage(inhaler, "no-id", readingsOf(inhaler, 10, 0).slice(0, 1));
    const envelope = JSON.parse(message.payload.toString());
    delete envelope.readings[0].sensor_id;
    const outcome = await only({
      topic: message.topic,
      payload: Buffer.from(JSON.stringify(envelope)),
    });
    expect(outcome.kind === "uplink" && outcome.deadLetter?.reason).toMatch(
      /sensor_id is required for sensor code 25/,
    );
    const wrongSerial = JSON.parse(message.payload.toString());
    wrongSerial.message_id = "wrong-serial";
    wrongSerial.readings[0].sensor_id = "OTHER1";
    const mismatch = await only({
      topic: message.topic,
      payload: Buffer.from(JSON.stringify(wrongSerial)),
    });
    expect(mismatch.kind === "uplink" && mismatch.deadLetter?.reason).toMatch(
      /sensor_id OTHER1 differs from the serial_number/,
    );
    const cell = uplinkMessage(cellScale, "c-1", readingsOf(cellScale, 4, 0).slice(0, 1));
    const renamed = JSON.parse(cell.payload.toString());
    renamed.device_type = "Vendor BPM - Wide Range";
    const unknownType = await only({
      topic: cell.topic,
      payload: Buffer.from(JSON.stringify(renamed)),
    });
    expect(unknownType.kind === "uplink" && unknownType.deadLetter?.reason).toMatch(
      /device_type "Vendor BPM - Wide Range" is not a direct-cellular type/,
    );
  });

  it("stores a reading taken with an unset device clock at the gateway's receive time, estimated", async () => {
    await activateForPatient(store, bpm);
    const readings = readingsOf(bpm, 3, 0).slice(0, 2);
    const message = uplinkMessage(bpm, "m-clock", readings);
    const payload = JSON.parse(message.payload.toString());
    payload.readings[0].clock_unset = true;
    const result = await run({
      topic: message.topic,
      payload: Buffer.from(JSON.stringify(payload)),
    });
    const rows = await rowsOf(result);
    const receivedAt = parseIso(payload.readings[0].received_at)!;
    const first = rows.filter((r) => r.timestamp === receivedAt);
    expect(first.length).toBe(readings[0]!.records.length);
    expect(first.every((r) => r.estimatedTimestamp)).toBe(true);
    const second = rows.filter((r) => r.timestamp === readings[1]!.timestamp);
    expect(second.length).toBe(readings[1]!.records.length);
    expect(second.every((r) => !r.estimatedTimestamp)).toBe(true);
  });

  it("stores a pulse oximeter spot-check flagged 'device clock is not set' (PLXS 2A5E flags bit 4) at the receive time, estimated", async () => {
    const oximeter = senderFor(catalogue.get("Vendor Pulse Ox"), 5);
    await activateForPatient(store, oximeter);
    const readings = readingsOf(oximeter, 3, 0).slice(0, 2);
    const message = uplinkMessage(oximeter, "m-plx-clock", readings);
    const payload = JSON.parse(message.payload.toString());
    const spot = (payload.readings[0].values as { uuid: string; value_b64: string }[]).find(
      (v) => v.uuid.toUpperCase() === "2A5E",
    )!;
    const bytes = Buffer.from(spot.value_b64, "base64");
    bytes[0]! |= 0x10;
    spot.value_b64 = bytes.toString("base64");
    const rows = await rowsOf(
      await run({ topic: message.topic, payload: Buffer.from(JSON.stringify(payload)) }),
    );
    const receivedAt = parseIso(payload.readings[0].received_at)!;
    const first = rows.filter((r) => r.timestamp === receivedAt);
    expect(first.length).toBe(readings[0]!.records.length);
    expect(first.every((r) => r.estimatedTimestamp)).toBe(true);
    const second = rows.filter((r) => r.timestamp === readings[1]!.timestamp);
    expect(second.length).toBe(readings[1]!.records.length);
    expect(second.every((r) => !r.estimatedTimestamp)).toBe(true);
  });

  it("stores a real cuff's, scale's or oximeter's reading that carries no time stamp (optional in BLS, WSS and PLXS) at the receive time, estimated; sent again, once", async () => {
    /** The measurement value re-encoded as a device without a clock sends it. */
    const undated: Record<string, (bytes: Uint8Array) => Uint8Array> = {
      "2A35": (b) =>
        encodeBloodPressureMeasurement({
          ...decodeBloodPressureMeasurement(b),
          timeStamp: undefined,
        }),
      "2A9D": (b) =>
        encodeWeightMeasurement({ ...decodeWeightMeasurement(b), timeStamp: undefined }),
      "2A5E": (b) =>
        encodePlxSpotCheckMeasurement({
          ...decodePlxSpotCheckMeasurement(b),
          timestamp: undefined,
        }),
    };
    const account = await store.accounts.create({
      clientDomain: "clinic",
      environment: "development",
    });
    const types = ["Vendor BPM - Wide Range", "Vendor Scale", "Vendor Pulse Ox"];
    for (const [n, name] of types.entries()) {
      const sender = senderFor(catalogue.get(name), 20 + n);
      await deviceForPatient(store, account.id, sender, `P-${n}`);
      const [reading] = readingsOf(sender, 3, 0);
      const message = uplinkMessage(sender, `m-undated-${n}`, [reading!]);
      const payload = JSON.parse(message.payload.toString());
      for (const v of payload.readings[0].values as { uuid: string; value_b64: string }[]) {
        const strip = undated[v.uuid.toUpperCase()];
        if (strip === undefined) continue;
        v.value_b64 = Buffer.from(strip(Buffer.from(v.value_b64, "base64"))).toString("base64");
      }
      const bytes = Buffer.from(JSON.stringify(payload));
      const result = await run({ topic: message.topic, payload: bytes });
      expect(result.deadLetters.map((d) => d.reason)).toEqual([]);
      const rows = await rowsOf(result);
      const receivedAt = parseIso(payload.readings[0].received_at)!;
      expect(rows.map((r) => [r.metric, r.timestamp, r.estimatedTimestamp, r.accountId])).toEqual(
        reading!.records.map((r) => [r.metric, receivedAt, true, account.id]),
      );
      // The gateway sending it again (a new message id, the same reading): stored once.
      const again = JSON.stringify({ ...payload, message_id: `m-undated-${n}-again` });
      const resent = await run({ topic: message.topic, payload: Buffer.from(again) });
      expect(resent.outcomes[0]).toMatchObject({ stored: 0, duplicates: rows.length });
    }
  });

  it("stores a real meter's HI or LO reading past the profile's range, flagged by its Sensor Status (GLS bits 5 and 6), as the top with the alert or the bottom", async () => {
    const glucometer = senderFor(catalogue.get("Vendor Glucometer"), 6);
    await activateForPatient(store, glucometer);
    const readings = readingsOf(glucometer, 3, 0).slice(0, 2);
    const message = uplinkMessage(glucometer, "m-hi-lo", readings);
    const payload = JSON.parse(message.payload.toString());
    // A meter measuring to 700 mg/dL sends its HI as 700 (0.007 kg/L), its LO as 10.
    const flagged = [
      { kgPerL: 0.007, status: "resultHigherThanDeviceCanProcess" },
      { kgPerL: 0.0001, status: "resultLowerThanDeviceCanProcess" },
    ] as const;
    for (const [i, { kgPerL, status }] of flagged.entries()) {
      const v = (payload.readings[i].values as { uuid: string; value_b64: string }[]).find(
        (x) => x.uuid.toUpperCase() === "2A18",
      )!;
      const m = decodeGlucoseMeasurement(Buffer.from(v.value_b64, "base64"));
      const bytes = encodeGlucoseMeasurement({
        ...m,
        concentration: { ...m.concentration!, unit: "kg/L", value: kgPerL },
        sensorStatus: { ...SENSOR_STATUS.none(), [status]: true },
      });
      v.value_b64 = Buffer.from(bytes).toString("base64");
    }
    const result = await run({
      topic: message.topic,
      payload: Buffer.from(JSON.stringify(payload)),
    });
    expect(result.deadLetters.map((d) => d.reason)).toEqual([]);
    const glucose = (await rowsOf(result)).filter((r) => r.metric === "glucose");
    expect(glucose.map((r) => [r.timestamp, r.value1, r.filterParams?.alert])).toEqual([
      [readings[0]!.timestamp, 600, "sensor_result_above_range"],
      [readings[1]!.timestamp, 20, undefined],
    ]);
  });

  /** One reading of `sender` whose `uuid` value is rewritten as a real device would send it. */
  const rewritten = (
    sender: ReturnType<typeof senderFor>,
    id: string,
    uuid: string,
    rewrite: (bytes: Uint8Array) => Uint8Array,
    nth = 0,
  ) => {
    const reading = readingsOf(sender, 3, 0)[nth];
    const message = uplinkMessage(sender, id, [reading!]);
    const payload = JSON.parse(message.payload.toString());
    const v = (payload.readings[0].values as { uuid: string; value_b64: string }[]).find(
      (x) => x.uuid.toUpperCase() === uuid,
    )!;
    v.value_b64 = Buffer.from(rewrite(Buffer.from(v.value_b64, "base64"))).toString("base64");
    return {
      reading: reading!,
      message: { topic: message.topic, payload: Buffer.from(JSON.stringify(payload)) },
    };
  };

  it("stores a cuff's blood pressure when the pulse taken with it is past the profile's range, leaving the pulse out with a dead letter naming it", async () => {
    await activateForPatient(store, bpm);
    const { reading, message } = rewritten(bpm, "m-bpm-pulse-250", "2A35", (b) =>
      encodeBloodPressureMeasurement({ ...decodeBloodPressureMeasurement(b), pulseRate: 250 }),
    );
    const result = await run(message);
    const rows = await rowsOf(result);
    expect(rows.map((r) => r.metric)).toEqual(
      reading.records.map((r) => r.metric).filter((m) => m !== "pulse"),
    );
    const bp = reading.records.find((r) => r.metric === "blood_pressure")!;
    expect(rows.find((r) => r.metric === "blood_pressure")).toMatchObject({
      value1: bp.value_1,
      value2: bp.value_2,
    });
    expect(result.outcomes[0]).toMatchObject({ kind: "uplink", stored: rows.length });
    expect(result.deadLetters.map((d) => d.reason)).toEqual([
      expect.stringMatching(
        /^readings\.0: E_CODEC_RANGE: .*pulse_rate at byte \d+: 250 .*left out/,
      ),
    ]);
  });

  it("stores an oximeter's SpO2 when its pulse or perfusion index is past the profile's range, leaving that one out with a dead letter naming it", async () => {
    const oximeter = senderFor(catalogue.get("Vendor Pulse Ox"), 7);
    await activateForPatient(store, oximeter);
    const cases = [
      ["pulse", { pulseRate: 280 }, /pulse_rate at byte \d+: 280 /],
      ["perfusion_index", { pulseAmplitudeIndex: 25 }, /pulse_amplitude_index at byte \d+: 25 /],
    ] as const;
    for (const [n, [metric, change, why]] of cases.entries()) {
      const { reading, message } = rewritten(
        oximeter,
        `m-plx-range-${n}`,
        "2A5E",
        (b) => encodePlxSpotCheckMeasurement({ ...decodePlxSpotCheckMeasurement(b), ...change }),
        n,
      );
      const result = await run(message);
      const rows = await rowsOf(result);
      expect(rows.map((r) => r.metric)).toEqual(
        reading.records.map((r) => r.metric).filter((m) => m !== metric),
      );
      expect(rows.find((r) => r.metric === "spO2")?.value1).toBe(
        reading.records.find((r) => r.metric === "spO2")!.value_1,
      );
      expect(result.deadLetters.map((d) => d.reason)).toEqual([
        expect.stringMatching(
          new RegExp(`^readings\\.0: E_CODEC_RANGE: .*${why.source}.*left out`),
        ),
      ]);
    }
  });

  it("keys a reading stored at an estimated time by the device's own stamp: each reading of a visit kept, a re-send stored once", async () => {
    const glucometer = senderFor(catalogue.get("Vendor Glucometer"), 4);
    await activateForPatient(store, glucometer);
    const readings = readingsOf(glucometer, 3, 0).slice(0, 3);
    // One visit to a device whose clock was found unset: every reading received at one time.
    const message = uplinkMessage(glucometer, "v-1", readings);
    const payload = JSON.parse(message.payload.toString());
    for (const r of payload.readings) {
      r.clock_unset = true;
      r.received_at = payload.readings[0].received_at;
    }
    const visit = await run({
      topic: message.topic,
      payload: Buffer.from(JSON.stringify(payload)),
    });
    const records = readings.reduce((n, r) => n + r.records.length, 0);
    expect(visit.stored).toHaveLength(records);
    // The device re-sends them once its clock is set: the same readings, stamped as before.
    const resent = await run(uplinkMessage(glucometer, "v-2", readings));
    expect(resent.stored).toHaveLength(0);
    expect(resent.outcomes[0]).toMatchObject({ stored: 0, duplicates: records });
  });

  it("forgets a message id and a dead letter after the retention (swept hourly); the reading re-sent then is a duplicate, stored once", async () => {
    await activateForPatient(store, bpm);
    const message = uplinkMessage(bpm, "m-1", readingsOf(bpm, 3, 0).slice(0, 1));
    const first = await run(message);
    expect(first.stored.length).toBeGreaterThan(0);
    const garbage = await run({ topic: message.topic, payload: Buffer.from("{not json") });
    expect(garbage.outcomes[0]).toMatchObject({ kind: "dead_letter" });
    const deadLetters = async () => (await store.deadLetters.list()).rows.length;
    expect(await deadLetters()).toBe(1);

    const sweep = ingestRetention(store, clock);
    sweep.start();
    // Until the retention has passed, the id is remembered: a redelivery stores nothing.
    await clock.run({ until: clock.now() + INGEST_RETENTION_MS - MS_PER_HOUR });
    await sweep.whenIdle();
    const early = await run(message);
    expect(early.outcomes).toEqual([{ kind: "redelivered", messageId: "m-1" }]);
    expect(await deadLetters()).toBe(1);

    // The first sweep after it forgets the id; the readings are still stored once.
    await clock.run({ until: clock.now() + 2 * MS_PER_HOUR });
    await sweep.whenIdle();
    const late = await run(message);
    expect(late.outcomes).toEqual([
      {
        kind: "uplink",
        messageId: "m-1",
        stored: 0,
        duplicates: first.stored.length,
        deadLetter: null,
      },
    ]);
    expect(await store.measurements.count(first.stored[0]!.accountId!)).toBe(first.stored.length);
    expect(await deadLetters()).toBe(0);
    await sweep.stop();
  });
});
