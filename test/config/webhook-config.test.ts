import { describe, expect, it } from "vitest";
import { serveConfig } from "../../src/config/serve-config.ts";
import {
  DEFAULT_WEBHOOK_CONCURRENCY,
  DEFAULT_WEBHOOK_TIMEOUT_MS,
  parseWebhookConcurrency,
  parseWebhookSenderSpec,
  parseWebhookTimeout,
} from "../../src/config/webhook-config.ts";
import { isRpmlabError } from "../../src/core/errors.ts";
import { RecordSender } from "../../src/webhooks/record-sender.ts";
import { createWebhookSender } from "../../src/webhooks/sender.ts";
import { runCli } from "../catalogue/cli-io.ts";

const refused = (fn: () => unknown, field: string) => {
  try {
    fn();
  } catch (error) {
    expect(isRpmlabError(error, "E_CONFIG_INVALID")).toBe(true);
    expect((error as { details: { field: string } }).details.field).toBe(field);
    return;
  }
  throw new Error("expected E_CONFIG_INVALID");
};

describe("webhook delivery settings", () => {
  it("the sender boundary: http or record, by spec string", async () => {
    expect(parseWebhookSenderSpec(" http ")).toEqual({ kind: "http" });
    expect(createWebhookSender("record")).toBeInstanceOf(RecordSender);
    const http = createWebhookSender("http");
    expect(http).not.toBeInstanceOf(RecordSender);
    await http.close();
    refused(() => parseWebhookSenderSpec("smtp"), "webhook-sender");
  });

  it("timeouts take ms or s, from 100 ms to 10 minutes; concurrency 1 to 256", () => {
    expect(parseWebhookTimeout("10s")).toBe(10_000);
    expect(parseWebhookTimeout("2500ms")).toBe(2500);
    expect(parseWebhookTimeout("750")).toBe(750);
    for (const bad of ["50ms", "601s", "ten", "-1s", ""])
      refused(() => parseWebhookTimeout(bad), "webhook-timeout");
    // `rpmlab webhooks resend|test --timeout`: the error names the flag the command has.
    expect(() => parseWebhookTimeout("abc", "--timeout")).toThrow(/^--timeout must be a duration/);
    refused(() => parseWebhookTimeout("abc", "--timeout"), "timeout");
    expect(parseWebhookConcurrency("32")).toBe(32);
    for (const bad of ["0", "257", "1.5", "x"])
      refused(() => parseWebhookConcurrency(bad), "webhook-concurrency");
  });

  it("rpmlab serve refuses a log level pino does not have: exit 2, naming the flag, no stack", async () => {
    const { code, stdout, stderr } = await runCli(
      "serve",
      "--store",
      "memory",
      "--broker",
      "embedded:0",
      "--port",
      "0",
      "--log-level",
      "loud",
    );
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(
      /^rpmlab: E_CONFIG_INVALID: --log-level must be one of fatal, .*got "loud"$/,
    );
  });

  it("rpmlab serve: defaults, and the flags", () => {
    expect(serveConfig({}, {}).webhooks).toEqual({
      timeoutMs: DEFAULT_WEBHOOK_TIMEOUT_MS,
      concurrency: DEFAULT_WEBHOOK_CONCURRENCY,
    });
    expect(serveConfig({}, {}).webhookSender).toBe("http");
    expect(serveConfig({ webhookTimeout: "3s", webhookConcurrency: "2" }, {}).webhooks).toEqual({
      timeoutMs: 3000,
      concurrency: 2,
    });
    refused(() => serveConfig({ webhookTimeout: "forever" }, {}), "webhook-timeout");
  });
});
