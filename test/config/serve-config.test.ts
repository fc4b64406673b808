import { describe, expect, it } from "vitest";
import { DEFAULT_FULFILMENT_CONFIG } from "../../src/config/fulfilment-config.ts";
import { serveConfig } from "../../src/config/serve-config.ts";
import { isRpmlabError } from "../../src/core/errors.ts";
import { runCli } from "../catalogue/cli-io.ts";

function fieldOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    if (isRpmlabError(error, "E_CONFIG_INVALID")) return String(error.details.field);
    throw error;
  }
  return undefined;
}

describe("rpmlab serve configuration", () => {
  it("defaults to the embedded broker, the lab's SQLite file, port 8000 and no rate limit", () => {
    expect(serveConfig({}, {})).toEqual({
      store: "sqlite:./.rpmlab/lab.db",
      broker: "embedded",
      host: "127.0.0.1",
      port: 8000,
      rateLimit: null,
      clientDomain: "lab",
      adminToken: undefined,
      ingestId: "rpmlab-ingest",
      ingestGroup: null,
      fulfilment: DEFAULT_FULFILMENT_CONFIG,
      webhookSender: "http",
      webhooks: { timeoutMs: 10_000, concurrency: 8 },
    });
  });

  it("takes the store and admin token from the environment when no flag is given", () => {
    const config = serveConfig({}, { RPMLAB_STORE: "memory", RPMLAB_ADMIN_TOKEN: "t".repeat(20) });
    expect(config.store).toBe("memory");
    expect(config.adminToken).toBe("t".repeat(20));
    expect(serveConfig({ store: "sqlite:x.db" }, { RPMLAB_STORE: "memory" }).store).toBe(
      "sqlite:x.db",
    );
  });

  it("takes the broker, whose URL holds the lab service's password, from RPMLAB_BROKER: no command line shows it", () => {
    const url = "mqtt://rpmlab-ingest:s3cret@broker.example:1883";
    expect(serveConfig({}, { RPMLAB_BROKER: url }).broker).toBe(url);
    expect(serveConfig({}, { RPMLAB_BROKER: "" }).broker).toBe("embedded");
    expect(serveConfig({ broker: "embedded:0" }, { RPMLAB_BROKER: url }).broker).toBe("embedded:0");
    expect(() => serveConfig({}, { RPMLAB_BROKER: "mqtt://svc:s3cret@db:1883/x" })).toThrow(
      /^\$RPMLAB_BROKER: invalid broker "mqtt:\/\/svc:\*\*\*@db:1883\/x": an MQTT broker URL has no path/,
    );
    expect(fieldOf(() => serveConfig({}, { RPMLAB_BROKER: "redis://x" }))).toBe("broker");
  });

  it("says a PostgreSQL store's port is out of range rather than 'not a valid URL'", () => {
    expect(() => serveConfig({ store: "postgres://u:secret@db:99999/lab" }, {})).toThrow(
      /^--store: invalid store "postgres:\/\/u:\*\*\*@db:99999\/lab": the port must be a whole number from 1 to 65535, got "99999"$/,
    );
    expect(fieldOf(() => serveConfig({ store: "postgresql://db:70000" }, {}))).toBe("store");
  });

  it("says when a bad store came from RPMLAB_STORE, which no command line shows", () => {
    expect(() => serveConfig({}, { RPMLAB_STORE: "mysql://x" })).toThrow(
      /^\$RPMLAB_STORE: invalid store "mysql:\/\/x": expected memory/,
    );
    expect(fieldOf(() => serveConfig({}, { RPMLAB_STORE: "sqlite:" }))).toBe("store");
    expect(() => serveConfig({ store: "mysql://x" }, { RPMLAB_STORE: "memory" })).toThrow(
      /^--store: invalid store "mysql:\/\/x"/,
    );
  });

  it("reads an empty RPMLAB_ADMIN_TOKEN as unset, and says where a short token came from", () => {
    expect(serveConfig({}, { RPMLAB_ADMIN_TOKEN: "" }).adminToken).toBeUndefined();
    expect(() => serveConfig({}, { RPMLAB_ADMIN_TOKEN: "short" })).toThrow(
      /\$RPMLAB_ADMIN_TOKEN: the admin token must be at least 16 characters, got 5/,
    );
    expect(() =>
      serveConfig({ adminToken: "short" }, { RPMLAB_ADMIN_TOKEN: "t".repeat(20) }),
    ).toThrow(/--admin-token: the admin token must be at least 16 characters/);
  });

  it("refuses an admin token no HTTP client can send back (a secret file's trailing newline), without echoing it", () => {
    const token = "t".repeat(20);
    for (const bad of [`${token}\n`, ` ${token}`, `${token}\t`, `tt\u0000${token}`]) {
      const error = (() => {
        try {
          serveConfig({}, { RPMLAB_ADMIN_TOKEN: bad });
        } catch (caught) {
          return caught as Error;
        }
        return undefined;
      })();
      expect(error?.message, JSON.stringify(bad)).toMatch(
        /^\$RPMLAB_ADMIN_TOKEN: the admin token may not begin or end with spaces, nor hold line breaks or control characters/,
      );
      expect(error?.message).not.toContain(token);
    }
    expect(fieldOf(() => serveConfig({ adminToken: `${token}\r\n` }, {}))).toBe("admin-token");
    expect(serveConfig({ adminToken: "pass phrase of twenty" }, {}).adminToken).toBe(
      "pass phrase of twenty",
    );
  });

  it("refuses an empty --host (Node would listen on every interface)", () => {
    expect(fieldOf(() => serveConfig({ host: "" }, {}))).toBe("host");
    expect(fieldOf(() => serveConfig({ host: "  " }, {}))).toBe("host");
    expect(serveConfig({ host: "0.0.0.0" }, {}).host).toBe("0.0.0.0");
  });

  it("parses --port 0 (any free port) and --rate-limit 1/s (the real service's limit)", () => {
    const config = serveConfig({ port: "0", rateLimit: "1/s" }, {});
    expect(config.port).toBe(0);
    expect(config.rateLimit).toEqual({ max: 1, windowMs: 1000 });
  });

  it("shares the broker's load only when --ingest-group names a group", () => {
    expect(serveConfig({ ingestGroup: "ingest-fleet" }, {}).ingestGroup).toBe("ingest-fleet");
  });

  it("names the option at fault", () => {
    expect(fieldOf(() => serveConfig({ port: "80000" }, {}))).toBe("port");
    expect(fieldOf(() => serveConfig({ port: "http" }, {}))).toBe("port");
    expect(fieldOf(() => serveConfig({ adminToken: "short" }, {}))).toBe("admin-token");
    expect(fieldOf(() => serveConfig({ rateLimit: "fast" }, {}))).toBe("rate-limit");
    expect(fieldOf(() => serveConfig({ ingestId: "has space" }, {}))).toBe("ingest-id");
    expect(fieldOf(() => serveConfig({ ingestGroup: "a/b" }, {}))).toBe("ingest-group");
    expect(fieldOf(() => serveConfig({ clientDomain: "BAD DOMAIN" }, {}))).toBe("client-domain");
    expect(() => serveConfig({ store: "mysql://x" }, {})).toThrow(/mysql:\/\/x/);
    expect(() => serveConfig({ broker: "amqp://x" }, {})).toThrow(/amqp:\/\/x/);
  });

  it("rpmlab serve --store foo and --broker foo: exit 2, the message names the flag at fault", async () => {
    const store = await runCli("serve", "--store", "foo");
    expect(store.code).toBe(2);
    expect(store.stderr).toContain('rpmlab: E_CONFIG_INVALID: --store: invalid store "foo"');
    const broker = await runCli("serve", "--store", "memory", "--broker", "foo");
    expect(broker.code).toBe(2);
    expect(broker.stderr).toContain('rpmlab: E_CONFIG_INVALID: --broker: invalid broker "foo"');
  });

  it.each([
    ["--ingest-id", "must be 1 to 23 letters, digits or hyphens"],
    ["--ingest-group", "must be 1 to 64 letters, digits or hyphens"],
    ["--client-domain", "is not a client domain"],
  ])(
    "rpmlab serve %s of 5000 characters: exit 2, the value clipped in the message",
    async (flag, why) => {
      const value = `${"a".repeat(4999)}/`;
      const { code, stdout, stderr } = await runCli("serve", "--store", "memory", flag, value);
      expect(code).toBe(2);
      expect(stdout).toBe("");
      expect(stderr).toContain(`rpmlab: E_CONFIG_INVALID: ${flag}`);
      expect(stderr).toContain(why);
      expect(stderr).toContain(`"${"a".repeat(200)}…" (5000 characters)`);
      expect(stderr.length).toBeLessThan(500);
    },
  );
});
