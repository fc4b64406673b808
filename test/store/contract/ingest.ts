import { describe, expect, it } from "vitest";
import { type ContractEnv, expectCode, newAccount, reading, T0 } from "./env.ts";

/** DESIGN "Uplink": idempotent ingestion, raw bytes for audit, orphans, dead letters. */
export function ingestContract(env: ContractEnv): void {
  describe("measurement ingestion", () => {
    it("stores every field of the wire-formats record, raw bytes included", async () => {
      const raw = new Uint8Array([0x1e, 0x7a, 0x00, 0x50, 0x00, 0x00, 0xff, 0x07]);
      const input = reading({
        metric: "blood_pressure",
        value1: 122.5,
        value2: 81,
        estimatedTimestamp: true,
        filterParams: { measurement_index: 587, flags: { inhalation_valid: 1 } },
        measurementIndex: 587,
        messageId: "msg-1",
        characteristicUuid: "00002a35-0000-1000-8000-00805f9b34fb",
        raw,
        created: T0 + 28_109,
      });
      const { inserted, duplicates } = await env.store.measurements.insertMany([input]);
      expect(duplicates).toEqual([]);
      expect(inserted).toHaveLength(1);
      const { created, ...rest } = input;
      expect(inserted[0]).toEqual({ ...rest, id: inserted[0]!.id, created });
      expect(Number.isInteger(inserted[0]!.id)).toBe(true);
      expect(await env.store.measurements.get(inserted[0]!.id)).toEqual(inserted[0]);
      expect(await env.store.measurements.get(inserted[0]!.id + 1000)).toBeNull();
      // created defaults to the store's clock.
      const [next] = (await env.store.measurements.insertMany([reading({ timestamp: T0 + 1 })]))
        .inserted;
      expect(next?.created).toBe(env.clock.now());
      expect(next?.raw).toBeNull();
      expect(next?.value2).toBeNull();
      expect(next?.filterParams).toBeNull();
    });

    it("keys an estimated reading by the device's own stamp, not the time it is stored at", async () => {
      const estimated = (deviceTimestamp: number, timestamp: number) =>
        reading({ timestamp, deviceTimestamp, estimatedTimestamp: true, measurementIndex: 3 });
      // Two readings received at one time: two device stamps, two readings.
      const visit = await env.store.measurements.insertMany([
        estimated(T0 + 60_000, T0 + 900_000),
        estimated(T0 + 120_000, T0 + 900_000),
      ]);
      expect(visit.inserted).toHaveLength(2);
      // The first again, stored at its own (now right) time: the same reading.
      const resent = await env.store.measurements.insertMany([
        reading({ timestamp: T0 + 60_000, measurementIndex: 3 }),
      ]);
      expect(resent).toEqual({ inserted: [], duplicates: [0] });
    });

    it("stores nothing twice: the same message again is all duplicates", async () => {
      const batch = [
        reading({
          metric: "blood_pressure",
          value1: 120,
          value2: 80,
          measurementIndex: 7,
          messageId: "m1",
        }),
        reading({ metric: "pulse", value1: 70, measurementIndex: 7, messageId: "m1" }),
        reading({ metric: "battery_percentage", value1: 90, measurementIndex: 7, messageId: "m1" }),
      ];
      const first = await env.store.measurements.insertMany(batch);
      expect(first.inserted.map((m) => m.metric)).toEqual([
        "blood_pressure",
        "pulse",
        "battery_percentage",
      ]);
      const again = await env.store.measurements.insertMany(batch);
      expect(again).toEqual({ inserted: [], duplicates: [0, 1, 2] });
      expect(
        await env.store.measurements.listOrphans({
          hardwareUuid: "297056120BD7",
          sensorCode: "10",
        }),
      ).toHaveLength(3);
    });

    it("treats the same (device, metric, timestamp, index) from another message as a duplicate", async () => {
      const original = reading({ measurementIndex: 3, value1: 70, messageId: "m1" });
      const [kept] = (await env.store.measurements.insertMany([original])).inserted;
      const resend = reading({
        measurementIndex: 3,
        value1: 71,
        messageId: "m2",
        created: T0 + 999,
      });
      const result = await env.store.measurements.insertMany([
        reading({ measurementIndex: 4, messageId: "m2" }), // a new reading at the same time
        resend,
        reading({ measurementIndex: 4, messageId: "m2" }), // repeated within the batch
        reading({ measurementIndex: 3, metric: "spO2", messageId: "m2" }), // another metric
        reading({ measurementIndex: 3, source: "0A:0B:0C:0D:0E:0F", messageId: "m2" }), // another device
        reading({ measurementIndex: 3, timestamp: T0 + 60_000, messageId: "m2" }), // another time
      ]);
      expect(result.duplicates).toEqual([1, 2]);
      expect(result.inserted).toHaveLength(4);
      expect(await env.store.measurements.get(kept!.id)).toEqual(kept);
    });

    it("gives an orphan to the device whose gateway relays the same reading again, never across accounts", async () => {
      const a = await newAccount(env);
      const owner = { accountId: a.id, deviceId: "bpm-1", deviceName: "Vendor BPM - Wide Range" };
      const relayed = { measurementIndex: 5, messageId: "g2-1", hardwareUuid: "AAAAAAAAAAAA" };
      // Another gateway in range relayed the reading first: no device there, an orphan.
      const [orphan] = (await env.store.measurements.insertMany([reading(relayed)])).inserted;
      const mine = { ...owner, measurementIndex: 5, messageId: "g1-1", patientExternalId: "P-1" };
      const result = await env.store.measurements.insertMany([
        reading({ ...mine, metric: "spO2" }), // a new record of the same reading
        reading(mine),
      ]);
      expect(result.duplicates).toEqual([]);
      const taken = { ...orphan!, ...owner, patientExternalId: "P-1" };
      expect(result.inserted).toEqual([taken, expect.objectContaining({ metric: "spO2" })]);
      expect(await env.store.measurements.get(orphan!.id)).toEqual(taken);
      // Once the device's, a copy is a duplicate again; within a batch, the orphan first.
      expect((await env.store.measurements.insertMany([reading(mine)])).duplicates).toEqual([0]);
      const batch = await env.store.measurements.insertMany([
        reading({ ...relayed, measurementIndex: 6 }),
        reading({ ...mine, measurementIndex: 6 }),
      ]);
      expect(batch.duplicates).toEqual([]);
      expect(batch.inserted).toEqual([expect.objectContaining({ deviceId: "bpm-1" })]);
      // An orphan another account's gateway kept stays there.
      const b = await newAccount(env);
      await env.store.measurements.insertMany([
        reading({ ...relayed, measurementIndex: 7, accountId: b.id }),
      ]);
      const other = await env.store.measurements.insertMany([
        reading({ ...mine, measurementIndex: 7 }),
      ]);
      expect(other).toEqual({ inserted: [], duplicates: [0] });
    });

    it("dedupes inhaler records on device_log_index, and records without index on time", async () => {
      const log = (i: number) =>
        reading({
          sensorCode: "25",
          sensorId: "AB1234",
          metric: "inhaler_medication_event",
          value1: 1,
          deviceLogIndex: i,
        });
      expect((await env.store.measurements.insertMany([log(1), log(2)])).inserted).toHaveLength(2);
      expect((await env.store.measurements.insertMany([log(2), log(3)])).duplicates).toEqual([0]);
      const glucose = reading({ sensorCode: "12", metric: "glucose", value1: 104 });
      expect((await env.store.measurements.insertMany([glucose])).inserted).toHaveLength(1);
      expect(
        (await env.store.measurements.insertMany([{ ...glucose, value1: 105 }])).duplicates,
      ).toEqual([0]);
    });

    it("inserts large batches in chunks, and checks the whole batch before storing any", async () => {
      const many = Array.from({ length: 1234 }, (_, i) => reading({ timestamp: T0 + i * 60_000 }));
      const result = await env.store.measurements.insertMany(many);
      expect(result.inserted).toHaveLength(1234);
      expect(result.inserted.map((m) => m.timestamp)).toEqual(many.map((m) => m.timestamp));
      // One invalid record fails the batch: nothing of it is stored.
      const bad = [
        reading({ timestamp: T0 - 1 }),
        reading({ timestamp: T0 - 2, value1: Number.NaN }),
      ];
      await expectCode(env.store.measurements.insertMany(bad), "E_STORE_INVALID");
      expect((await env.store.measurements.insertMany([bad[0]!])).inserted).toHaveLength(1);
    });

    it("rejects values one dialect would store and the other refuse", async () => {
      const insert = (over: Parameters<typeof reading>[0]) =>
        env.store.measurements.insertMany([reading(over)]);
      await expectCode(insert({ value1: Number.POSITIVE_INFINITY }), "E_STORE_INVALID");
      await expectCode(insert({ timestamp: T0 + 0.5 }), "E_STORE_INVALID");
      await expectCode(insert({ timezoneOffset: 5.5 }), "E_STORE_INVALID");
      // PostgreSQL's integer column holds 32 bits, SQLite's 64.
      await expectCode(insert({ timezoneOffset: 2 ** 31 }), "E_STORE_INVALID");
      await expectCode(insert({ timezoneOffset: -(2 ** 31) - 1 }), "E_STORE_INVALID");
      expect((await insert({ timezoneOffset: -(2 ** 31) })).inserted).toHaveLength(1);
      await expectCode(insert({ measurementIndex: -1 }), "E_STORE_INVALID");
      await expectCode(insert({ source: "" }), "E_STORE_INVALID");
    });

    it("claims each uplink message id once", async () => {
      expect(await env.store.ingestedMessages.has("m-1")).toBe(false);
      expect(await env.store.ingestedMessages.claim("m-1")).toBe(true);
      expect(await env.store.ingestedMessages.claim("m-1")).toBe(false);
      expect(await env.store.ingestedMessages.has("m-1")).toBe(true);
      expect(await env.store.ingestedMessages.claim("m-2", T0 - 5)).toBe(true);
    });

    it("forgets the claims received before a time, past a chunk of them, and keeps the rest", async () => {
      const old = Array.from({ length: 1_203 }, (_, i) => `old-${i}`);
      expect((await env.store.ingestedMessages.claimMany(old, T0 - 2)).size).toBe(1_203);
      await env.store.ingestedMessages.claim("edge", T0);
      await env.store.ingestedMessages.claim("new", T0 + 1);
      expect(await env.store.ingestedMessages.prune(T0)).toBe(1_203);
      expect(await env.store.ingestedMessages.has("old-0")).toBe(false);
      expect(await env.store.ingestedMessages.has("old-1202")).toBe(false);
      expect(await env.store.ingestedMessages.has("edge")).toBe(true);
      expect(await env.store.ingestedMessages.has("new")).toBe(true);
      // Forgotten: the id can be claimed again.
      expect(await env.store.ingestedMessages.claim("old-7")).toBe(true);
      expect(await env.store.ingestedMessages.prune(T0)).toBe(0);
    });

    it("keeps readings of an unassociated gateway and attaches them on activation", async () => {
      const a = await newAccount(env);
      const gw = "297056120BD7";
      await env.store.measurements.insertMany([
        reading({ timestamp: T0 + 2 }),
        reading({ timestamp: T0 + 1 }),
        reading({ sensorCode: "24", metric: "spO2", value1: 97 }),
        reading({ hardwareUuid: "AAAAAAAAAAAA" }),
        ...["S1", "S2"].map((sensorId) =>
          reading({
            source: sensorId,
            sensorCode: "25",
            sensorId,
            metric: "low_battery_event",
            value1: 1,
          }),
        ),
      ]);
      expect(
        await env.store.measurements.listOrphans({ hardwareUuid: gw, sensorCode: "10" }),
      ).toHaveLength(2);
      const p = await env.store.patients.create(a.id, { externalId: "P-1" });
      const d = await env.store.devices.create(a.id, {
        name: "Vendor BPM - Wide Range",
        sensorCode: "10",
        hardwareUuid: gw,
        status: "Delivered",
        patientId: p.id,
      });
      const attached = await env.store.measurements.attachOrphans(
        { hardwareUuid: gw, sensorCode: "10" },
        { accountId: a.id, deviceId: d.id, deviceName: d.name, patientExternalId: "P-1" },
      );
      expect(attached.map((m) => m.timestamp)).toEqual([T0 + 1, T0 + 2]);
      expect(attached.every((m) => m.deviceId === d.id && m.patientExternalId === "P-1")).toBe(
        true,
      );
      const byDevice = await env.store.measurements.query({
        accountId: a.id,
        deviceId: d.id,
        limit: 10,
      });
      expect(byDevice.rows).toEqual(attached);
      expect(
        await env.store.measurements.listOrphans({ hardwareUuid: gw, sensorCode: "10" }),
      ).toEqual([]);
      expect(
        await env.store.measurements.listOrphans({ hardwareUuid: gw, sensorCode: "24" }),
      ).toHaveLength(1);
      const inhaler = await env.store.measurements.attachOrphans(
        { hardwareUuid: gw, sensorCode: "25", sensorId: "S2" },
        { accountId: a.id, deviceId: "inhaler-2", deviceName: null, patientExternalId: null },
      );
      expect(inhaler.map((m) => m.sensorId)).toEqual(["S2"]);
      // Readings already placed in another account are never handed over.
      const b = await newAccount(env);
      await env.store.measurements.insertMany([
        reading({ hardwareUuid: "BBBBBBBBBBBB", accountId: b.id, timestamp: T0 + 7 }),
      ]);
      const stolen = await env.store.measurements.attachOrphans(
        { hardwareUuid: "BBBBBBBBBBBB", sensorCode: "10" },
        { accountId: a.id, deviceId: d.id, deviceName: null, patientExternalId: null },
      );
      expect(stolen).toEqual([]);
    });
  });

  describe("dead letters", () => {
    it("keeps topic, payload bytes, reason and receive time, oldest first", async () => {
      const payload = new Uint8Array([0x7b, 0x00, 0xff, 0xfe, 0x0a]);
      const first = await env.store.deadLetters.add({
        topic: "rpm/v1/gw/297056120BD7/up",
        payload,
        reason: "E_CODEC_TRUNCATED: blood pressure measurement ends at byte 3",
        messageId: "m-9",
      });
      expect(first).toMatchObject({
        topic: "rpm/v1/gw/297056120BD7/up",
        received: T0,
        messageId: "m-9",
      });
      expect(first.payload).toEqual(payload);
      const second = await env.store.deadLetters.add({
        topic: "rpm/v1/cell/356938035643809/up",
        payload: new Uint8Array(0),
        reason: "not JSON",
        received: T0 + 5,
      });
      expect(second.messageId).toBeNull();
      expect(await env.store.deadLetters.get(first.id)).toEqual(first);
      const page = await env.store.deadLetters.list({}, { limit: 1, offset: 1, count: true });
      expect(page).toEqual({ rows: [second], total: 2 });
      expect(await env.store.deadLetters.delete(first.id)).toBe(true);
      expect(await env.store.deadLetters.delete(first.id)).toBe(false);
      expect(await env.store.deadLetters.get(first.id)).toBeNull();
    });

    it("deletes every dead letter a filter matches, past a chunk, and leaves the rest", async () => {
      const add = (topic: string, received: number) =>
        env.store.deadLetters.add({ topic, payload: new Uint8Array([1]), reason: "r", received });
      // 1,203: past the 500-row chunks the delete goes in.
      await env.store.transaction(async (tx) => {
        for (let i = 0; i < 1203; i++) {
          await tx.deadLetters.add({
            topic: "rpm/v1/gw/297056120BD7/up",
            payload: new Uint8Array([1]),
            reason: "r",
            received: T0 + i,
          });
        }
      });
      const otherSource = await add("rpm/v1/cell/356938035643809/up", T0);
      const boundary = await add("rpm/v1/gw/297056120BD7/up", T0 + 5000);
      expect(
        await env.store.deadLetters.deleteMany({ source: "297056120bd7", until: T0 + 5000 }),
      ).toBe(1203);
      expect((await env.store.deadLetters.list()).rows).toEqual([otherSource, boundary]);
      expect(await env.store.deadLetters.deleteMany({ until: T0 + 1 })).toBe(1);
      expect(await env.store.deadLetters.deleteMany({})).toBe(1);
      expect((await env.store.deadLetters.list()).rows).toEqual([]);
    });

    it("keeps a topic or reason holding U+0000, which PostgreSQL text cannot, as \\u0000 on every dialect", async () => {
      // A broker that passes on a topic MQTT forbids ([MQTT-4.7.3-2]), and the reason ingestion
      // gave it (quoting the level); before, PostgreSQL refused the row and the ingestor retried
      // the message for ever, holding every message behind it.
      const letter = await env.store.deadLetters.add({
        topic: "rpm/v1/gw/A1B2C3D4E001\u0000/up",
        payload: new Uint8Array([0x7b, 0x7d]),
        reason:
          'E_MQTT_TOPIC: topic "rpm/v1/gw/A1B2C3D4E001\u0000/up": level 4 "A1B2C3D4E001\u0000"',
      });
      expect(letter.topic).toBe("rpm/v1/gw/A1B2C3D4E001\\u0000/up");
      expect(letter.reason).toBe(
        'E_MQTT_TOPIC: topic "rpm/v1/gw/A1B2C3D4E001\\u0000/up": level 4 "A1B2C3D4E001\\u0000"',
      );
      expect(await env.store.deadLetters.get(letter.id)).toEqual(letter);
      const listed = await env.store.deadLetters.list({ topicPrefix: "rpm/v1/gw/A1B2C3D4E001\\" });
      expect(listed.rows).toEqual([letter]);
    });

    it("lists newest first, by topic prefix, source, message id and receive time", async () => {
      const add = (topic: string, received: number, messageId: string | null = null) =>
        env.store.deadLetters.add({
          topic,
          payload: new Uint8Array([1]),
          reason: "r",
          received,
          messageId,
        });
      const a = await add("rpm/v1/gw/297056120BD7/up", T0, "m-1");
      const b = await add("rpm/v1/gw/297056120BD7/status", T0 + 10);
      const c = await add("rpm/v1/cell/356938035643809/up", T0 + 20, "m-1");
      const d = await add("RPM/v1/gw/297056120BD7/up", T0 + 30);
      // Dead-lettered for its lower-case uuid (E_MQTT_TOPIC): found by the id it names.
      const e = await add("rpm/v1/gw/297056120bd7/up", T0 + 35);
      const held = await env.store.deadLetters.add({
        topic: "x",
        payload: new Uint8Array(0),
        reason: "r",
        received: T0 + 40,
        holdsClaim: true,
      });
      expect([a.holdsClaim, held.holdsClaim]).toEqual([false, true]);
      expect((await env.store.deadLetters.get(held.id))?.holdsClaim).toBe(true);
      const ids = async (filter: Parameters<typeof env.store.deadLetters.list>[0]) =>
        (await env.store.deadLetters.list(filter)).rows.map((r) => r.id);
      expect(await ids({})).toEqual([a.id, b.id, c.id, d.id, e.id, held.id]);
      expect(await ids({ newestFirst: true })).toEqual([held.id, e.id, d.id, c.id, b.id, a.id]);
      // Case-sensitive, and wildcard characters are plain text.
      expect(await ids({ topicPrefix: "rpm/v1/gw/" })).toEqual([a.id, b.id, e.id]);
      expect(await ids({ topicPrefix: "rpm/v1/%" })).toEqual([]);
      expect(await ids({ source: "297056120BD7" })).toEqual([a.id, b.id, e.id]);
      expect(await ids({ source: "297056120bd7" })).toEqual([a.id, b.id, e.id]);
      // The id whole: a longer one sharing its start is another sender.
      expect(await ids({ source: "297056120BD" })).toEqual([]);
      expect(await ids({ source: "356938035643809" })).toEqual([c.id]);
      expect(await ids({ messageId: "m-1", newestFirst: true })).toEqual([c.id, a.id]);
      expect(await ids({ since: T0 + 10, until: T0 + 30 })).toEqual([b.id, c.id]);
      const page = await env.store.deadLetters.list(
        { newestFirst: true, since: T0 + 10 },
        { limit: 2, offset: 1, count: true },
      );
      expect({ ids: page.rows.map((r) => r.id), total: page.total }).toEqual({
        ids: [e.id, d.id],
        total: 5,
      });
    });

    it("finds a topic by a prefix or source holding characters beyond the BMP (two UTF-16 units)", async () => {
      // A topic an external broker let through (the embedded one's ACL would not).
      const letter = await env.store.deadLetters.add({
        topic: "rpm/v1/gw/\u{1F600}x/up",
        payload: new Uint8Array([1]),
        reason: "r",
        received: T0,
      });
      const ids = async (filter: Parameters<typeof env.store.deadLetters.list>[0]) =>
        (await env.store.deadLetters.list(filter)).rows.map((r) => r.id);
      expect(await ids({ topicPrefix: "rpm/v1/gw/\u{1F600}" })).toEqual([letter.id]);
      expect(await ids({ topicPrefix: "rpm/v1/gw/\u{1F600}x/" })).toEqual([letter.id]);
      expect(await ids({ topicPrefix: "rpm/v1/gw/\u{1F600}y" })).toEqual([]);
      expect(await ids({ source: "\u{1F600}x" })).toEqual([letter.id]);
      expect(await env.store.deadLetters.deleteMany({ topicPrefix: "rpm/v1/gw/\u{1F600}" })).toBe(
        1,
      );
    });
  });
}
