import { describe, expect, it } from "vitest";
import { RpmlabError } from "../../src/core/errors.ts";
import { encodePayload, parsePayload } from "../../src/mqtt/payload.ts";
import { cellularUplink, gatewayUplink, toUplink } from "../../src/mqtt/uplink.ts";

const T = 1_767_254_400_000; // 2026-01-01T08:00:00Z
const GW = "297056120BD7";

const sample = () =>
  gatewayUplink({
    messageId: "297056120BD7-000042",
    gatewayUuid: GW,
    sentAt: T + 5000,
    readings: [
      {
        deviceAddress: "F01122334455",
        sensorCode: "10",
        receivedAt: T,
        sequence: 41,
        values: [
          { uuid: "2A35", value: Uint8Array.of(0x1e, 0x7a, 0x00) },
          { uuid: "2A19", value: Uint8Array.of(90) },
        ],
      },
    ],
  });

function errorOf(fn: () => unknown): RpmlabError {
  try {
    fn();
  } catch (e) {
    if (e instanceof RpmlabError) return e;
    throw e;
  }
  throw new Error("expected an error");
}

const bytes = (value: unknown) => Buffer.from(JSON.stringify(value));
/** A gateway's check-in (status online), as it publishes one. */
const online = {
  v: 1,
  online: true,
  signal_strength: 17,
  firmware_version: "2.4.1",
  bootloader_version: "1.0.3",
  provisioned: true,
  checkin_at: "2026-01-01T08:00:00Z",
};

describe("uplink envelope v1", () => {
  it("round-trips: builder → bytes → parse → the lab's terms", () => {
    const payload = sample();
    expect(payload).toEqual({
      v: 1,
      message_id: "297056120BD7-000042",
      gateway_uuid: GW,
      sent_at: "2026-01-01T08:00:05.000000Z",
      readings: [
        {
          device_address: "F01122334455",
          sensor_code: "10",
          received_at: "2026-01-01T08:00:00.000000Z",
          sequence: 41,
          values: [
            { uuid: "2A35", value_b64: "HnoA" },
            { uuid: "2A19", value_b64: "Wg==" },
          ],
        },
      ],
    });
    const uplink = toUplink(parsePayload("gw/up", encodePayload("gw/up", payload)));
    expect(uplink).toEqual({
      source: { kind: "gateway", gatewayUuid: GW },
      messageId: "297056120BD7-000042",
      sentAt: T + 5000,
      readings: [
        {
          deviceAddress: "F01122334455",
          sensorCode: "10",
          sensorId: null,
          clockUnset: false,
          receivedAt: T,
          sequence: 41,
          values: [
            { uuid: "2A35", value: Uint8Array.of(0x1e, 0x7a, 0x00) },
            { uuid: "2A19", value: Uint8Array.of(90) },
          ],
        },
      ],
    });
    const cell = cellularUplink({
      messageId: "m1",
      imei: "356938035643809",
      deviceType: "Vendor Cellular BPM",
      sentAt: T,
      readings: [
        { receivedAt: T, sequence: 0, values: [{ uuid: "2A19", value: Uint8Array.of(1) }] },
      ],
    });
    expect(toUplink(parsePayload("cell/up", encodePayload("cell/up", cell))).source).toEqual({
      kind: "cellular",
      imei: "356938035643809",
      deviceType: "Vendor Cellular BPM",
    });
  });

  it("accepts UUIDs as host stacks spell them, and gives them back as src/gatt does", () => {
    const payload = sample();
    const values = payload.readings[0]!.values;
    values[0]!.uuid = "00002a35-0000-1000-8000-00805F9B34FB";
    values[1]!.uuid = "2a19";
    const uplink = toUplink(parsePayload("gw/up", bytes(payload)));
    expect(uplink.readings[0]!.values.map((v) => v.uuid)).toEqual(["2A35", "2A19"]);
  });

  it("refuses what is not the envelope, naming the field at fault", () => {
    const cases: [unknown, RegExp][] = [
      [{ ...sample(), v: 2 }, /v is 2; this lab speaks version 1/],
      [{ ...sample(), v: undefined }, /v is missing/],
      [{ ...sample(), extra: 1 }, /Unrecognized key: "extra"/],
      [{ ...sample(), gateway_uuid: "297056120bd7" }, /gateway_uuid: must be 12 upper-case hex/],
      [{ ...sample(), message_id: "has space" }, /message_id: must be 1 to 64/],
      [{ ...sample(), sent_at: "2026-02-30T00:00:00Z" }, /sent_at: is not a calendar date/],
      [{ ...sample(), sent_at: "2026-01-01T00:00:00+01:00" }, /sent_at: must be ISO 8601 UTC/],
      [{ ...sample(), readings: [] }, /readings: Too small/],
    ];
    for (const [payload, why] of cases) {
      const error = errorOf(() => parsePayload("gw/up", bytes(payload)));
      expect(error.code).toBe("E_MQTT_PAYLOAD");
      expect(error.message).toMatch(why);
    }
    const broken = sample();
    broken.readings[0]!.values[1]!.value_b64 = "not base64!";
    expect(errorOf(() => parsePayload("gw/up", bytes(broken))).message).toMatch(
      /readings\.0\.values\.1\.value_b64/,
    );
    // ATT caps a value at 512 bytes; 513 bytes are 684 base64 characters, as many as 512's.
    const oversized = sample();
    oversized.readings[0]!.values[0]!.value_b64 = Buffer.alloc(513).toString("base64");
    expect(errorOf(() => parsePayload("gw/up", bytes(oversized))).message).toMatch(
      /readings\.0\.values\.0\.value_b64: must decode to at most 512 bytes/,
    );
    oversized.readings[0]!.values[0]!.value_b64 = Buffer.alloc(512).toString("base64");
    expect(parsePayload("gw/up", bytes(oversized)).readings[0]!.values[0]!.value_b64).toHaveLength(
      684,
    );
    // An unknown key is quoted escaped: a lone surrogate or a control character as \uXXXX.
    for (const [key, shown] of [
      ["\\ud800", "\\\\ud800"],
      ["a\\u0000\\u001b[31m", "a\\\\u0000\\\\u001b\\[31m"],
    ]) {
      const text = `${JSON.stringify(sample()).slice(0, -1)},"${key}":1}`;
      const reason = errorOf(() => parsePayload("gw/up", Buffer.from(text))).message;
      expect(reason).toMatch(new RegExp(`Unrecognized key: "${shown}"$`));
      expect(reason).not.toMatch(/[\p{Cc}\p{Cs}]/u);
    }
    expect(errorOf(() => parsePayload("gw/up", Buffer.from("{nope"))).message).toMatch(/not JSON/);
    expect(errorOf(() => parsePayload("gw/up", Buffer.from([0xff, 0xfe]))).message).toMatch(
      /not UTF-8 text: byte 0 starts no valid character/,
    );
    // The byte at fault, past multi-byte characters and a U+FFFD the payload itself carries
    // (EF BF BD); an overlong encoding (C0 AF) is as invalid as a stray FF.
    for (const bad of [[0xff], [0xc0, 0xaf]]) {
      const payload = Buffer.concat([Buffer.from('{"é�":"'), Buffer.from(bad), Buffer.from('"}')]);
      expect(errorOf(() => parsePayload("gw/up", payload)).message).toMatch(
        /not UTF-8 text: byte 10 starts no valid character$/,
      );
    }
    expect(errorOf(() => parsePayload("gw/up", Buffer.from("[1]"))).message).toMatch(
      /not a JSON object/,
    );
    expect(() => encodePayload("gw/up", { ...sample(), gateway_uuid: "x" })).toThrow(
      /gateway_uuid/,
    );
  });

  it("names the byte where a payload stops being JSON, and never repeats its control characters", () => {
    const reason = (text: string) =>
      errorOf(() => parsePayload("gw/up", Buffer.from(text))).message;
    // Bytes, not characters: é is two; a byte order mark three.
    expect(reason('{"é":1,}')).toMatch(/not JSON: property name expected at byte 8 \("}"\)$/);
    expect(reason('\uFEFF{"v":1,"a":tru}')).toMatch(/not JSON: invalid symbol at byte 14 \("t"\)$/);
    expect(reason('{"v":1} junk')).toMatch(/not JSON: invalid symbol at byte 8 \("j"\)$/);
    expect(reason('{"v":1,"readings":[')).toMatch(
      /not JSON: close bracket expected at byte 19, its end$/,
    );
    expect(reason("")).toMatch(/not JSON: value expected at byte 0, its end$/);
    // A device's payload of terminal escapes: the reason names the byte, escaped, not the text.
    const escapes = reason("\u001b]0;pwned\u0007\u001b[2J");
    expect(escapes).toMatch(/not JSON: invalid symbol at byte 0 \("\\u001b"\)$/);
    expect([...escapes].some((c) => c < " ")).toBe(false);
    expect(escapes).not.toMatch(/pwned/);
  });

  it("parses status (online, and the last will) and both downlinks", () => {
    expect(parsePayload("gw/status", bytes(online))).toEqual(online);
    expect(parsePayload("gw/status", bytes({ v: 1, online: false }))).toEqual({
      v: 1,
      online: false,
    });
    expect(
      errorOf(() => parsePayload("gw/status", bytes({ ...online, signal_strength: 31 }))).message,
    ).toMatch(/signal_strength/);
    const whitelist = {
      v: 1,
      type: "whitelist",
      devices: [{ mac_address: "F01122334455", sensor_code: "10", whitelist_status: "CO" }],
    };
    expect(parsePayload("gw/down", bytes(whitelist))).toEqual(whitelist);
    const time = { v: 1, type: "time", now: "2026-01-01T08:00:00.123456Z" };
    expect(parsePayload("gw/down", bytes(time))).toEqual(time);
  });

  it("refuses control characters and lone surrogates in reported text, naming the field", () => {
    // JSON carries both as \u escapes; PostgreSQL refused U+0000 as a store error naming no
    // field, and both stores wrote U+FFFD for a lone surrogate (the version stored changed).
    const cases: [Record<string, unknown>, string][] = [
      [{ firmware_version: "2.4\u00001" }, "firmware_version"],
      [{ firmware_version: "2.4.1\n" }, "firmware_version"],
      [{ firmware_version: "\u001b[31m2.4.1" }, "firmware_version"],
      [{ firmware_version: "2.4.1\u0085" }, "firmware_version"],
      [{ bootloader_version: "1.0\ud800" }, "bootloader_version"],
      [{ bootloader_version: "\udfff1.0" }, "bootloader_version"],
    ];
    for (const [change, field] of cases) {
      const error = errorOf(() => parsePayload("gw/status", bytes({ ...online, ...change })));
      expect(error.message).toContain(`${field}: must be printable text`);
      expect(error.details).toMatchObject({ field });
    }
    const cellular = cellularUplink({
      messageId: "m-1",
      imei: "356938035643809",
      deviceType: "Vendor Cellular BPM",
      sentAt: T,
      readings: [
        { receivedAt: T, sequence: 1, values: [{ uuid: "2A19", value: Uint8Array.of(9) }] },
      ],
    });
    expect(
      errorOf(() =>
        parsePayload("cell/up", bytes({ ...cellular, device_type: "Vendor\u0000Cellular BPM" })),
      ).message,
    ).toContain("device_type: must be printable text");
    // Printable text beyond ASCII, astral characters (a surrogate pair) included, is kept.
    const kept = { ...online, firmware_version: "2.4.1-β 🚀", bootloader_version: "ü" };
    expect(parsePayload("gw/status", bytes(kept))).toEqual(kept);
  });

  it("names v without repeating it: a deeply nested or huge value, or a huge key, gives a short reason", () => {
    // JSON.stringify of a v nested 200,000 arrays deep overflowed the stack: the reason named a
    // RangeError ("internal error"), not v.
    const deep = `{"v":${"[".repeat(200_000)}${"]".repeat(200_000)}}`;
    const nested = errorOf(() => parsePayload("gw/up", Buffer.from(deep)));
    expect(nested.message).toBe(
      "rpm/v1/gw/{gateway_uuid}/up: v is an array; this lab speaks version 1",
    );
    expect(nested.details).toMatchObject({ field: "v" });
    const huge = errorOf(() =>
      parsePayload("gw/up", bytes({ ...sample(), v: "9".repeat(500_000) })),
    );
    expect(huge.message).toMatch(/^rpm\/v1\/gw\/\{gateway_uuid\}\/up: v is "9{199}…; this lab/);
    expect(errorOf(() => parsePayload("gw/up", bytes({ ...sample(), v: null }))).message).toMatch(
      /v is null;/,
    );
    // An unknown key of 500,000 characters, and 50,000 unknown keys: named, not repeated.
    const keyed = errorOf(() =>
      parsePayload("gw/up", bytes({ ...sample(), ["k".repeat(500_000)]: 1 })),
    );
    expect(keyed.message).toMatch(/Unrecognized key: "k+…$/);
    expect(keyed.message.length).toBeLessThan(300);
    const many = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, i]));
    const keys = errorOf(() => parsePayload("gw/up", bytes({ ...sample(), ...many })));
    expect(keys.message).toMatch(/Unrecognized keys: "k0", "k1", .*…$/);
    expect(keys.message.length).toBeLessThan(300);
  });
});
