import { describe, expect, it } from "vitest";
import {
  parseBrokerSpec,
  redactBrokerSpec,
  withoutCredentials,
} from "../../src/config/broker-spec.ts";
import { createBroker, ExternalBroker } from "../../src/mqtt/broker.ts";
import { EmbeddedBroker } from "../../src/mqtt/embedded-broker.ts";
import { refusal } from "../support/refusal.ts";

describe("broker spec strings (DESIGN.md Boundaries)", () => {
  it("parses embedded, embedded:PORT and broker URLs", () => {
    expect(parseBrokerSpec("embedded")).toEqual({ kind: "embedded", port: 1883 });
    expect(parseBrokerSpec(" embedded:0 ")).toEqual({ kind: "embedded", port: 0 });
    expect(parseBrokerSpec("embedded:18830")).toEqual({ kind: "embedded", port: 18830 });
    expect(parseBrokerSpec("mqtt://127.0.0.1:1883")).toEqual({
      kind: "external",
      url: "mqtt://127.0.0.1:1883",
      tls: false,
    });
    expect(parseBrokerSpec("mqtts://user:secret@broker.example:8883/")).toMatchObject({
      kind: "external",
      tls: true,
    });
  });

  it("names the string and what is expected when it is not a broker spec", () => {
    for (const [spec, why] of [
      ["embeded", /expected embedded/],
      ["embedded:", /port must be/],
      ["embedded:65536", /port must be/],
      ["embedded:-1", /port must be/],
      ["http://127.0.0.1:1883", /expected embedded/],
      ["mqtt://", /not a valid URL|names no host/],
      ["mqtt://host:1883/topic", /no path/],
      ["mqtt://127.0.0.1:99999", /port must be a whole number from 1 to 65535, got "99999"/],
      // Not "any port": MQTT.js would quietly connect to 1883.
      ["mqtt://127.0.0.1:0", /port must be a whole number from 1 to 65535, got "0"/],
    ] as const) {
      const error = refusal(() => parseBrokerSpec(spec));
      expect(error.code, spec).toBe("E_CONFIG_INVALID");
      expect(error.message).toContain(`"${spec}"`);
      expect(error.message).toMatch(why);
    }
  });

  it("refuses a query or a fragment, naming the keys (MQTT.js would give every client the query's clientId)", () => {
    for (const [spec, why] of [
      ["mqtt://127.0.0.1:1883?clientId=x", /takes no query, got "clientId"/],
      ["mqtt://127.0.0.1:1883/?clean=false&keepalive=5", /got "clean", "keepalive"/],
      ["mqtt://127.0.0.1:1883?", /takes no query, got an empty one/],
      ["mqtts://broker.example:8883#tls", /takes no fragment, got "#tls"/],
    ] as const) {
      const error = refusal(() => parseBrokerSpec(spec));
      expect(error.message, spec).toMatch(/^invalid broker "/);
      expect(error.message, spec).toMatch(why);
      expect(error.details).toMatchObject({ field: "broker" });
    }
    // The keys are named, their values never shown (a query may carry a password).
    const message = errorOf(() =>
      parseBrokerSpec("mqtt://svc:s3cret@127.0.0.1:1883?clientId=ingest&password=hunter2"),
    );
    expect(message).toContain('got "clientId", "password"');
    expect(message).not.toMatch(/hunter2|s3cret|ingest/);
    expect(() => createBroker("mqtt://127.0.0.1:1883?clientId=x")).toThrow(/takes no query/);
  });

  it("never shows a password", () => {
    expect(redactBrokerSpec("mqtts://user:secret@broker.example:8883")).toBe(
      "mqtts://user:***@broker.example:8883",
    );
    expect(() => parseBrokerSpec("mqtt://user:secret@host:1/x")).toThrow(/user:\*\*\*@host/);
    // Specs the parser refuses are quoted in its error: a password in them is hidden all the same.
    for (const spec of [
      "MQTT://user:secret@host:1883", // the scheme in capitals
      " mqtt://user:secret@host:1883/x", // a blank pasted before it
      "mqtt://user:sec/ret@host:1883", // a / left unescaped
      "mqtt://user:sec@ret@host:1883/x", // an @ left unescaped
      "mqtt://user:sec?ret@host:1883", // a ? left unescaped
    ]) {
      const message = errorOf(() => parseBrokerSpec(spec));
      expect(message, spec).toMatch(/^invalid broker "/);
      expect(message, spec).not.toMatch(/sec|ret/);
    }
  });

  it("hands the broker URL on without the lab service's user name and password", () => {
    expect(withoutCredentials("mqtt://rpmlab-ingest:s3cr%40t@127.0.0.1:1883")).toBe(
      "mqtt://127.0.0.1:1883",
    );
    expect(withoutCredentials("mqtts://user@broker.example:8883")).toBe(
      "mqtts://broker.example:8883",
    );
    expect(withoutCredentials("mqtt://127.0.0.1:1883")).toBe("mqtt://127.0.0.1:1883");
  });

  it("opens the implementation the spec names, without starting anything", () => {
    expect(createBroker("embedded:0")).toBeInstanceOf(EmbeddedBroker);
    const external = createBroker("mqtt://u:p@127.0.0.1:1883");
    expect(external).toBeInstanceOf(ExternalBroker);
    expect(external.url).toBe("mqtt://u:p@127.0.0.1:1883");
    expect(external.describe).toBe("mqtt://u:***@127.0.0.1:1883");
    expect(external.sharedSubscriptions).toBe(true);
  });
});

function errorOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected an error");
}
