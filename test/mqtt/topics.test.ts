import { describe, expect, expectTypeOf, it } from "vitest";
import { RpmlabError } from "../../src/core/errors.ts";
import type { GatewayUplink } from "../../src/mqtt/envelope.ts";
import {
  filterOf,
  ingestFilters,
  parseTopic,
  TOPIC_KINDS,
  TOPICS,
  type TopicPayloads,
  topicOf,
} from "../../src/mqtt/topics.ts";

const GW = "297056120BD7";
const IMEI = "356938035643809";

describe("the topic map (DESIGN.md Uplink)", () => {
  it("builds and parses every topic, and types each payload", () => {
    expect(topicOf("gw/up", GW)).toBe(`rpm/v1/gw/${GW}/up`);
    expect(topicOf("gw/status", GW)).toBe(`rpm/v1/gw/${GW}/status`);
    expect(topicOf("gw/down", GW)).toBe(`rpm/v1/gw/${GW}/down`);
    expect(topicOf("cell/up", IMEI)).toBe(`rpm/v1/cell/${IMEI}/up`);
    for (const kind of TOPIC_KINDS) {
      const id = TOPICS[kind].id === "imei" ? IMEI : GW;
      const parsed = parseTopic(topicOf(kind, id));
      expect(parsed.kind).toBe(kind);
      expect("imei" in parsed ? parsed.imei : parsed.gatewayUuid).toBe(id);
    }
    expectTypeOf<TopicPayloads["gw/up"]>().toEqualTypeOf<GatewayUplink>();
    expect(TOPICS["gw/status"].retain).toBe(true);
    expect(TOPIC_KINDS.filter((k) => TOPICS[k].retain)).toEqual(["gw/status"]);
  });

  it("refuses a topic that does not parse, naming the level at fault", () => {
    const cases: [string, RegExp][] = [
      ["rpm/v1/gw/297056120bd7/up", /level 4 "297056120bd7" must be 12 upper-case hex/],
      ["rpm/v1/gw/2970-5612-0BD7/up", /level 4/],
      ["rpm/v1/cell/35693803564380/up", /an IMEI of 15 digits/],
      ["rpm/v1/gw/297056120BD7/sideways", /no topic rpm\/v1\/gw\/\{id\}\/sideways/],
      ["rpm/v1/cell/356938035643809/status", /no topic/],
      ["rpm/v2/gw/297056120BD7/up", /expected rpm\/v1\/gw\/\{gateway_uuid\}\/up/],
      ["rpm/v1/gw/297056120BD7/up/extra", /expected/],
      ["", /expected/],
    ];
    for (const [topic, why] of cases) {
      let error: unknown;
      try {
        parseTopic(topic);
      } catch (e) {
        error = e;
      }
      expect(error, topic).toBeInstanceOf(RpmlabError);
      expect((error as RpmlabError).code).toBe("E_MQTT_TOPIC");
      expect((error as RpmlabError).message).toMatch(why);
    }
    expect(() => topicOf("gw/up", "nope")).toThrow(/must be 12 upper-case hex/);
  });

  it("subscribes the ingestion core to every device topic, shared or plain", () => {
    expect(filterOf("gw/up")).toBe("rpm/v1/gw/+/up");
    expect(ingestFilters(null)).toEqual([
      "rpm/v1/gw/+/up",
      "rpm/v1/gw/+/status",
      "rpm/v1/cell/+/up",
    ]);
    expect(ingestFilters("rpmlab-ingest")).toEqual([
      "$share/rpmlab-ingest/rpm/v1/gw/+/up",
      "$share/rpmlab-ingest/rpm/v1/gw/+/status",
      "$share/rpmlab-ingest/rpm/v1/cell/+/up",
    ]);
  });
});
