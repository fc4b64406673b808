import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MessageProcessor } from "../../src/ingest/processor.ts";
import { readingsOf, senderFor, uplinkMessage } from "../ingest/fixtures.ts";
import { ADMIN, type Lab, makeLab } from "./helpers.ts";
import { activate, catalogue } from "./hwi-fixtures.ts";

const bpm = senderFor(catalogue.get("Vendor BPM - Wide Range"), 1);
const scale = senderFor(catalogue.get("Vendor Cellular Scale"), 3);

interface Item {
  id: number;
  topic: string;
  message_id: string | null;
  reason: string;
  received: string;
  payload_size: number;
}

/** An uplink whose envelope is changed by `change` (a hardware engineer's bad payload). */
function edited(
  message: { topic: string; payload: Uint8Array },
  change: (envelope: Record<string, unknown> & { readings: Record<string, unknown>[] }) => void,
) {
  const envelope = JSON.parse(Buffer.from(message.payload).toString());
  change(envelope);
  return { topic: message.topic, payload: Buffer.from(JSON.stringify(envelope)) };
}

/** README "Dead letters": /lab/v1/dead-letters/ over what ingestion could not use. */
describe("lab admin API: dead letters", () => {
  let lab: Lab;
  beforeEach(async () => {
    lab = await makeLab();
  });
  afterEach(() => lab.close());

  const admin = (method: "GET" | "POST" | "DELETE", path: string) =>
    lab.app.inject({ method, url: `/lab/v1/dead-letters/${path}`, headers: ADMIN });

  /** Ingests messages as the lab's ingestion core does (one batch), a second apart. */
  async function ingest(...messages: { topic: string; payload: Uint8Array }[]) {
    const processor = new MessageProcessor({ store: lab.store, catalogue });
    for (const m of messages) {
      await processor.process([{ ...m, receivedAt: lab.clock.now() }]);
      lab.advance(1000);
    }
  }

  const good = uplinkMessage(bpm, "bpm-1", readingsOf(bpm, 2, 0).slice(0, 1));
  const truncated = edited(good, (e) => {
    e.message_id = "bpm-short";
    (e.readings[0]!.values as { value_b64: string }[])[0]!.value_b64 = "HgA=";
  });
  const unknownCode = edited(good, (e) => {
    e.message_id = "bpm-code";
    e.readings[0]!.sensor_code = "99";
  });
  const notJson = { topic: `rpm/v1/cell/${scale.hardwareUuid}/up`, payload: Buffer.from("{") };
  const unknownType = edited(
    uplinkMessage(scale, "cell-1", readingsOf(scale, 2, 0).slice(0, 1)),
    (e) => {
      e.device_type = "Vendor Cellular Scale Pro";
    },
  );

  it("lists them newest first with the reason naming the field, filtered and paginated", async () => {
    await ingest(truncated, unknownCode, notJson, unknownType);
    const res = await admin("GET", "");
    expect(res.statusCode, res.body).toBe(200);
    const items = res.json() as Item[];
    expect(items.map((i) => i.message_id)).toEqual(["cell-1", null, "bpm-code", "bpm-short"]);
    expect(items.map((i) => i.reason)).toEqual([
      expect.stringMatching(
        /^readings\.0: E_INGEST_UNKNOWN_DEVICE: device_type "Vendor Cellular Scale Pro"/,
      ),
      expect.stringMatching(/^E_MQTT_PAYLOAD: .*not JSON/),
      expect.stringMatching(/^readings\.0: E_INGEST_UNKNOWN_DEVICE: sensor_code 99/),
      expect.stringMatching(/^readings\.0: E_CODEC_TRUNCATED: .*byte/),
    ]);
    expect(items[3]).toEqual({
      id: items[3]!.id,
      topic: `rpm/v1/gw/${bpm.hardwareUuid}/up`,
      message_id: "bpm-short",
      reason: items[3]!.reason,
      received: "2024-10-16T04:10:00.000000Z",
      payload_size: truncated.payload.byteLength,
    });

    const ids = async (query: string) =>
      ((await admin("GET", `?${query}`)).json() as Item[]).map((i) => i.message_id);
    expect(await ids(`source=${bpm.hardwareUuid.toLowerCase()}`)).toEqual([
      "bpm-code",
      "bpm-short",
    ]);
    expect(await ids("topic_prefix=rpm/v1/cell/")).toEqual(["cell-1", null]);
    expect(await ids("message_id=bpm-code")).toEqual(["bpm-code"]);
    expect(await ids("since=2024-10-16T04:10:01Z&until=2024-10-16T04:10:03%2B00:00")).toEqual([
      null,
      "bpm-code",
    ]);

    const page = (await admin("GET", "?page=2&page_size=3")).json();
    expect(page).toMatchObject({ count: 4, next: null, results: [{ message_id: "bpm-short" }] });
    expect(page.previous).toMatch(/\/lab\/v1\/dead-letters\/\?page=1&page_size=3$/);
  });

  it("answers 400 keyed by field for bad query parameters", async () => {
    const bad = async (query: string) => {
      const res = await admin("GET", `?${query}`);
      expect(res.statusCode, query).toBe(400);
      return res.json();
    };
    expect(await bad("since=yesterday&until=2024-13-01")).toEqual({
      since: ["Enter a valid date/time."],
      until: ["Enter a valid date/time."],
    });
    expect(await bad("since=2024-10-16&until=2024-10-16")).toEqual({
      until: ["Must be later than since."],
    });
    expect(await bad("source=a/b")).toEqual({
      source: ["A gateway uuid or an IMEI, without '/'."],
    });
    expect(await bad("page=x")).toEqual({ page: ["A valid integer is required."] });
  });

  it("shows one with its payload as text when UTF-8 and always as base64", async () => {
    await ingest(notJson);
    const [item] = (await admin("GET", "")).json() as Item[];
    const shown = await admin("GET", `${item!.id}/`);
    expect(shown.statusCode).toBe(200);
    expect(shown.json()).toEqual({
      ...item,
      payload_text: "{",
      payload_base64: "ew==",
    });
    const binary = await lab.store.deadLetters.add({
      topic: "rpm/v1/gw/297056120BD7/up",
      payload: new Uint8Array([0x7b, 0xff, 0xfe, 0x00]),
      reason: "E_MQTT_PAYLOAD: not UTF-8",
    });
    expect((await admin("GET", `${binary.id}/`)).json()).toMatchObject({
      payload_text: null,
      payload_base64: "e//+AA==",
      payload_size: 4,
    });
  });

  it("deletes one: 204, then 404 for it", async () => {
    await ingest(notJson, truncated);
    const [newest, oldest] = (await admin("GET", "")).json() as Item[];
    const gone = await admin("DELETE", `${newest!.id}/`);
    expect(gone.statusCode).toBe(204);
    expect(gone.body).toBe("");
    for (const method of ["GET", "DELETE"] as const) {
      const res = await admin(method, `${newest!.id}/`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ detail: `No dead letter has id "${newest!.id}".` });
    }
    expect((await admin("POST", `${newest!.id}/replay/`)).statusCode).toBe(404);
    expect((await admin("GET", "abc/")).statusCode).toBe(404);
    expect(((await admin("GET", "")).json() as Item[]).map((i) => i.id)).toEqual([oldest!.id]);
  });

  it("deletes in bulk what a filter matches, or all with all=true; neither is a 400 keyed all", async () => {
    await ingest(notJson, truncated, unknownType, unknownCode);
    const refused = await admin("DELETE", "");
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({
      all: ["Give a filter, or all to delete every dead letter."],
    });
    expect(((await admin("GET", "")).json() as Item[]).length).toBe(4);
    // The scale's two (its IMEI's topics), not the cuff's.
    const bySource = await admin("DELETE", `?source=${scale.hardwareUuid}`);
    expect(bySource.statusCode).toBe(200);
    expect(bySource.json()).toEqual({ deleted: 2 });
    const left = (await admin("GET", "")).json() as Item[];
    expect(left.map((i) => i.topic)).toEqual([good.topic, good.topic]);
    expect((await admin("DELETE", "?since=not-a-date")).statusCode).toBe(400);
    expect((await admin("DELETE", "?all=true")).json()).toEqual({ deleted: 2 });
    expect((await admin("GET", "")).json()).toEqual([]);
  });

  it("replays: kept again while the cause stands, stored once the device is activated", async () => {
    await ingest(unknownType);
    const [item] = (await admin("GET", "")).json() as Item[];
    const again = await admin("POST", `${item!.id}/replay/`);
    expect(again.statusCode, again.body).toBe(200);
    const kept = again.json();
    expect(kept).toMatchObject({
      replayed_id: item!.id,
      result: "dead_letter",
      stored: 0,
      dead_letter: { reason: item!.reason, message_id: "cell-1", topic: unknownType.topic },
    });
    expect(kept.dead_letter.id).not.toBe(item!.id);
    expect(((await admin("GET", "")).json() as Item[]).map((i) => i.id)).toEqual([
      kept.dead_letter.id,
    ]);

    // The fix a platform team makes: activate the scale on its IMEI.
    await activate(lab, {
      device: { name: "Vendor Cellular Scale", hardware_uuid: scale.hardwareUuid },
    });
    const done = await admin("POST", `${kept.dead_letter.id}/replay/`);
    expect(done.json()).toMatchObject({ result: "stored", duplicates: 0, dead_letter: null });
    expect(done.json().stored).toBeGreaterThan(0);
    expect((await admin("GET", "")).json()).toEqual([]);
    // Replaying the message again (kept by mistake): its id was ingested, nothing stored.
    const copy = await lab.store.deadLetters.add({
      ...unknownType,
      reason: "copy",
      messageId: "cell-1",
    });
    expect((await admin("POST", `${copy.id}/replay/`)).json()).toMatchObject({
      result: "already_ingested",
      stored: 0,
    });
  });

  it("takes the admin token on every route, and is in the OpenAPI document", async () => {
    const row = await lab.store.deadLetters.add({ ...notJson, reason: "r" });
    for (const [method, url] of [
      ["GET", ""],
      ["GET", `${row.id}/`],
      ["DELETE", `${row.id}/`],
      ["DELETE", "?all=true"],
      ["POST", `${row.id}/replay/`],
    ] as const) {
      const res = await lab.app.inject({ method, url: `/lab/v1/dead-letters/${url}` });
      expect(res.statusCode, `${method} ${url}`).toBe(401);
    }
    expect(await lab.store.deadLetters.get(row.id)).not.toBeNull();
    const doc = (await lab.app.inject({ method: "GET", url: "/docs/json" })).json();
    expect(Object.keys(doc.paths["/lab/v1/dead-letters/"]).sort()).toEqual(["delete", "get"]);
    expect(Object.keys(doc.paths["/lab/v1/dead-letters/{id}/"]).sort()).toEqual(["delete", "get"]);
    expect(doc.paths["/lab/v1/dead-letters/{id}/replay/"].post.description).toMatch(/replaced/);
  });
});
