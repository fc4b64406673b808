/**
 * `rpmlab webhooks deliveries` / `delivery` print what an endpoint answered escaped: C0, DEL and
 * the C1 range (U+0080–U+009F; U+009B is a one-character CSI to many terminals) as \u escapes.
 */
import { describe, expect, it } from "vitest";
import { renderDeliveries, renderDelivery } from "../../src/app/webhook-views.ts";
import type { AttemptRow, DeliveryRow } from "../../src/store/types-webhooks.ts";

const T = Date.UTC(2026, 2, 1);
/** An endpoint's words: a colour change (ESC [ and its C1 form CSI), DEL, NEL. */
const HOSTILE = "no\u001b[31m\u009b2J\u007f\u0085end";
/** A control character left raw, the line breaks between lines apart. */
const raw = (text: string) => /\p{Cc}/u.test(text.replaceAll("\n", ""));

const delivery: DeliveryRow = {
  id: "5b1e0c1e-6a39-4b5e-9a6f-0d7e2f1c3a4b",
  accountId: "a-1",
  webhookId: "8f0e6d2a-1c3b-4e5f-8a7b-9c0d1e2f3a4b",
  event: "PATIENT",
  body: "{}",
  state: "not_retried",
  retry: false,
  test: false,
  attempts: 1,
  manualAttempts: 0,
  nextAttemptAt: null,
  inFlight: false,
  hwiDeviceId: null,
  patientId: null,
  measurementIds: null,
  created: T,
  modified: T,
};

function attempt(fields: Partial<AttemptRow>): AttemptRow {
  return {
    id: 1,
    deliveryId: delivery.id,
    number: 1,
    at: T,
    endpoint: "https://hooks.example/x",
    statusCode: null,
    error: null,
    latencyMs: 12,
    responseSnippet: null,
    manual: false,
    ...fields,
  };
}

describe("rpmlab webhooks: an endpoint's answer on the terminal", () => {
  it("escapes DEL and C1 in the snippet, as it escapes C0", () => {
    const text = renderDelivery(
      { delivery, attempts: [attempt({ statusCode: 503, responseSnippet: HOSTILE })] },
      false,
    );
    expect(raw(text)).toBe(false);
    expect(text).toContain('503 in 12 ms "no\\u001b[31m\\u009b2J\\u007f\\u0085end"');
  });

  it("escapes every control character of an error, in the delivery and in the list", () => {
    const failed = attempt({ error: `HPE_INVALID_HEADER_TOKEN: ${HOSTILE}` });
    const shown = renderDelivery({ delivery, attempts: [failed] }, false);
    expect(raw(shown)).toBe(false);
    expect(shown).toContain(
      "→ HPE_INVALID_HEADER_TOKEN: no\\u001b[31m\\u009b2J\\u007f\\u0085end in",
    );
    const listed = renderDeliveries([{ ...delivery, lastAttempt: failed }], false);
    expect(raw(listed)).toBe(false);
    expect(listed).toContain("no\\u001b[31m\\u009b2J\\u007f\\u0085end in 12 ms");
    // --json is JSON: the text as it is, for programs.
    expect(JSON.parse(renderDelivery({ delivery, attempts: [failed] }, true))).toMatchObject({
      attempt_log: [{ error: `HPE_INVALID_HEADER_TOKEN: ${HOSTILE}` }],
    });
  });

  it("masks a secret query value of an attempt logged before the log masked them, in --json too", () => {
    const old = attempt({ endpoint: "https://hooks.example/x?id=7&token=abc", statusCode: 200 });
    const detail = { delivery, attempts: [old] };
    expect(renderDelivery(detail, false)).toContain(
      " https://hooks.example/x?id=7&token=*** → 200",
    );
    expect(JSON.parse(renderDelivery(detail, true)).attempt_log[0].endpoint).toBe(
      "https://hooks.example/x?id=7&token=***",
    );
    const listed = JSON.parse(renderDeliveries([{ ...delivery, lastAttempt: old }], true));
    expect(listed[0].last_attempt.endpoint).toBe("https://hooks.example/x?id=7&token=***");
  });
});
