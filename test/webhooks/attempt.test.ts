import { describe, expect, it } from "vitest";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import type { WebhookRow } from "../../src/store/types-ingest.ts";
import type { DeliveryRow } from "../../src/store/types-webhooks.ts";
import { attemptDelivery } from "../../src/webhooks/attempt.ts";
import { RecordSender } from "../../src/webhooks/record-sender.ts";
import { GIVE_UP_AFTER_MS } from "../../src/webhooks/retry-policy.ts";

const T = 1_772_409_600_000;
const webhook: WebhookRow = {
  id: "w-1",
  accountId: "a-1",
  endpoint: "https://client.example/hook",
  authHeader: "X-Token",
  authKey: "k",
  event: "MEASUREMENT",
  postAsArray: false,
  enabledByDefault: true,
  signingSecret: null,
  created: T,
  modified: T,
};
const delivery = (over: Partial<DeliveryRow> = {}): DeliveryRow => ({
  id: "d-1",
  accountId: "a-1",
  webhookId: "w-1",
  event: "MEASUREMENT",
  body: '{"metric":"pulse"}',
  state: "pending",
  retry: true,
  test: false,
  attempts: 0,
  manualAttempts: 0,
  nextAttemptAt: T,
  inFlight: false,
  hwiDeviceId: null,
  patientId: null,
  measurementIds: [1],
  created: T,
  modified: T,
  ...over,
});

/** What one attempt leads to, with the `record` sender (no socket). */
describe("a webhook attempt's outcome", () => {
  const clock = new VirtualClock({ startMs: T });
  const sender = new RecordSender();
  const deps = { sender, clock, rng: new Rng("attempts") };

  it("2xx delivers; a failure waits for its retry, the same wait for the same delivery and attempt", async () => {
    sender.answer = () => ({ statusCode: 204 });
    expect(await attemptDelivery(deps, delivery(), webhook, { manual: false })).toMatchObject({
      state: "delivered",
      nextAttemptAt: null,
      attempt: { statusCode: 204, endpoint: webhook.endpoint, manual: false },
    });
    expect(sender.requests.at(-1)?.headers).toMatchObject({
      "X-Token": "k",
      "X-Rpmlab-Attempt": "1",
    });
    sender.answer = () => ({ statusCode: 500, body: "oops" });
    const a = await attemptDelivery(deps, delivery({ attempts: 2 }), webhook, { manual: false });
    const b = await attemptDelivery(deps, delivery({ attempts: 2 }), webhook, { manual: false });
    expect(a.state).toBe("pending");
    // Jitter from the delivery's own stream: a restart draws the same wait.
    expect(a.nextAttemptAt).toBe(b.nextAttemptAt);
    expect(a.nextAttemptAt! - T).toBeGreaterThanOrEqual(60_000 * 0.8);
    expect(a.nextAttemptAt! - T).toBeLessThanOrEqual(60_000 * 1.2);
    expect(sender.requests.at(-1)?.headers["X-Rpmlab-Attempt"]).toBe("3");
  });

  it("backs off by the automatic failures only: resends by hand number their attempts but never push the next one away", async () => {
    sender.answer = () => ({ statusCode: 500 });
    // Two automatic failures and five resends: the third automatic wait is 1 min (±20 %), as
    // without the resends, not the 32 min of an eighth failure.
    const outcome = await attemptDelivery(
      deps,
      delivery({ attempts: 7, manualAttempts: 5 }),
      webhook,
      { manual: false },
    );
    expect(outcome.state).toBe("pending");
    expect(outcome.nextAttemptAt! - T).toBeGreaterThanOrEqual(60_000 * 0.8);
    expect(outcome.nextAttemptAt! - T).toBeLessThanOrEqual(60_000 * 1.2);
    expect(sender.requests.at(-1)?.headers["X-Rpmlab-Attempt"]).toBe("8");
  });

  it("leaves out an auth_header stored before the API refused it: rpmlab's headers stay, the POST goes", async () => {
    sender.answer = () => ({ statusCode: 200 });
    for (const authHeader of ["Content-Type", "content-length", "X-Rpmlab-Event"]) {
      const outcome = await attemptDelivery(
        deps,
        delivery(),
        { ...webhook, authHeader },
        {
          manual: false,
        },
      );
      expect(outcome.state).toBe("delivered");
      const headers = sender.requests.at(-1)!.headers;
      const names = Object.keys(headers).map((name) => name.toLowerCase());
      expect(new Set(names).size).toBe(names.length);
      expect(names).not.toContain("content-length");
      expect(headers["content-type"]).toBe("application/json");
      expect(headers["X-Rpmlab-Event"]).toBe("MEASUREMENT");
    }
  });

  it("reads a Retry-After date in each of RFC 9110's three forms as GMT, whatever the machine's time zone", async () => {
    // §5.6.7: a recipient MUST accept IMF-fixdate, RFC 850 and asctime dates, all of them GMT.
    const date = "Sun, 06 Nov 1994 08:49:37 GMT";
    const zone = process.env.TZ;
    process.env.TZ = "America/New_York";
    try {
      for (const retryAfter of [
        "Sun, 06 Nov 1994 08:59:37 GMT",
        "Sunday, 06-Nov-94 08:59:37 GMT",
        "Sun Nov  6 08:59:37 1994",
      ]) {
        sender.answer = () => ({ statusCode: 503, retryAfter, date });
        const outcome = await attemptDelivery(deps, delivery(), webhook, { manual: false });
        // Ten minutes on the server's clock, not ten minutes and five hours (capped at one).
        expect(outcome.nextAttemptAt! - T, retryAfter).toBe(600_000);
      }
      // A Retry-After of a day waits the hour rpmlab caps it at, not past the 24 hours.
      sender.answer = () => ({ statusCode: 429, retryAfter: "86400" });
      const capped = await attemptDelivery(deps, delivery(), webhook, { manual: false });
      expect(capped).toMatchObject({ state: "pending", nextAttemptAt: T + 3_600_000 });
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it("retries until 24 hours after creation, the last attempt at that mark, then gives up; other kinds and tests are not retried", async () => {
    sender.answer = () => ({ error: "connection refused" });
    // README "Retries": until 24 h after the delivery was created. An hour's wait from 10 s
    // before the mark would pass it: the last attempt is at the mark, not skipped (a receiver
    // back at 23 h 59 min gets it).
    const late = delivery({ created: T - GIVE_UP_AFTER_MS + 10_000, attempts: 30 });
    expect(await attemptDelivery(deps, late, webhook, { manual: false })).toMatchObject({
      state: "pending",
      nextAttemptAt: T + 10_000,
    });
    const old = delivery({ created: T - GIVE_UP_AFTER_MS, attempts: 31 });
    expect((await attemptDelivery(deps, old, webhook, { manual: false })).state).toBe("failed");
    const patient = delivery({ event: "PATIENT", retry: false });
    const patients: WebhookRow = { ...webhook, event: "PATIENT" };
    expect(await attemptDelivery(deps, patient, patients, { manual: false })).toMatchObject({
      state: "not_retried",
      attempt: { statusCode: null, error: "connection refused" },
    });
    const test = delivery({ test: true });
    expect((await attemptDelivery(deps, test, webhook, { manual: false })).state).toBe(
      "not_retried",
    );
  });

  it("a failed resend changes nothing but the log; a deleted webhook, or one made another kind, fails without a request", async () => {
    sender.answer = () => ({ statusCode: 503 });
    // Null: the state and schedule the delivery has when the attempt is recorded stay.
    const waiting = delivery({ attempts: 3, nextAttemptAt: T + 90_000 });
    expect(await attemptDelivery(deps, waiting, webhook, { manual: true })).toMatchObject({
      state: null,
      attempt: { manual: true, statusCode: 503 },
    });
    const count = sender.requests.length;
    expect(await attemptDelivery(deps, delivery(), null, { manual: false })).toMatchObject({
      state: "failed",
      attempt: { endpoint: null, error: "the webhook was deleted" },
    });
    // Made another kind since (PUT/PATCH event): its endpoint no longer takes this body.
    const fulfilment: WebhookRow = { ...webhook, event: "FULFILLMENT" };
    expect(await attemptDelivery(deps, delivery(), fulfilment, { manual: false })).toMatchObject({
      state: "failed",
      attempt: {
        endpoint: null,
        error: "the webhook now takes FULFILLMENT events, not MEASUREMENT",
      },
    });
    // A resend of a delivery whose webhook was deleted since: logged, its state kept.
    const given = delivery({
      state: "not_retried",
      retry: false,
      attempts: 1,
      nextAttemptAt: null,
    });
    expect(await attemptDelivery(deps, given, null, { manual: true })).toMatchObject({
      state: null,
      attempt: { manual: true, error: "the webhook was deleted" },
    });
    expect(sender.requests.length).toBe(count);
  });

  it("posts to an endpoint's whole query, and logs secret-named parameters' values as ***, names and other values kept", async () => {
    sender.answer = () => ({ statusCode: 200 });
    const endpoint =
      "https://u:pw@hooks.example/x?token=abc&id=7&API_Key=k1&access_token=t2&X-Amz-Signature=s3&sig=s4&clientSecret=s5&code=c6&monkey=banana&pass=&auth#frag";
    const outcome = await attemptDelivery(
      deps,
      delivery(),
      { ...webhook, endpoint },
      {
        manual: false,
      },
    );
    expect(sender.requests.at(-1)!.url).toBe(endpoint);
    expect(outcome.attempt.endpoint).toBe(
      "https://u:***@hooks.example/x?token=***&id=7&API_Key=***&access_token=***&X-Amz-Signature=***&sig=***&clientSecret=***&code=***&monkey=banana&pass=&auth#frag",
    );
    // Names as a receiver decodes them, and every name of the list in any case.
    for (const name of ["apikey", "SECRET", "password", "Key", "api%5Fkey", "auth+token"]) {
      const one = await attemptDelivery(
        deps,
        delivery(),
        { ...webhook, endpoint: `https://hooks.example/x?${name}=v&a=b` },
        { manual: false },
      );
      expect(one.attempt.endpoint, name).toBe(`https://hooks.example/x?${name}=***&a=b`);
    }
  });

  it("sends an endpoint's user:password as Basic auth, never logs the password (nor a user name alone, a token), and lets an Authorization auth_header win", async () => {
    sender.answer = () => ({ statusCode: 200 });
    const endpoint = "https://al%C3%AFce:s3cr%40t@client.example/hook?x=1";
    const withCredentials = { ...webhook, endpoint };
    const outcome = await attemptDelivery(deps, delivery(), withCredentials, { manual: false });
    expect(sender.requests.at(-1)!.headers.authorization).toBe(
      `Basic ${Buffer.from("alïce:s3cr@t").toString("base64")}`,
    );
    expect(outcome.attempt.endpoint).toBe("https://al%C3%AFce:***@client.example/hook?x=1");
    // A token as the user name, no password: the token is the secret.
    const token = { ...webhook, endpoint: "https://tok3n@client.example/hook" };
    const tokenOutcome = await attemptDelivery(deps, delivery(), token, { manual: false });
    expect(sender.requests.at(-1)!.headers.authorization).toBe(
      `Basic ${Buffer.from("tok3n:").toString("base64")}`,
    );
    expect(tokenOutcome.attempt.endpoint).toBe("https://***@client.example/hook");
    const own = { ...withCredentials, authHeader: "Authorization", authKey: "Bearer t0k" };
    await attemptDelivery(deps, delivery(), own, { manual: false });
    const headers = sender.requests.at(-1)!.headers;
    expect(Object.entries(headers).filter(([name]) => /^authorization$/i.test(name))).toEqual([
      ["Authorization", "Bearer t0k"],
    ]);
  });

  it("logs an echoing endpoint's answer with the credentials it was sent as ***, as the endpoint is logged", async () => {
    // An echo receiver (httpbin's /post, Postman Echo) answers the request's headers and URL:
    // the snippet held the auth_key and the Basic credentials the log's endpoint hides.
    const echo = (request: { url: string; headers: Record<string, string> }) =>
      JSON.stringify({ url: request.url, headers: request.headers });
    sender.answer = (request) => ({ statusCode: 500, body: echo(request) });
    const endpoint = "https://ops:pa55word@client.example/hook?token=qtok3n&id=7";
    const own = { ...webhook, endpoint, authHeader: "X-Api-Key", authKey: 'Bearer "t0k3n-abc"' };
    const outcome = await attemptDelivery(deps, delivery(), own, { manual: false });
    const basic = Buffer.from("ops:pa55word").toString("base64");
    expect(sender.requests.at(-1)!.headers.authorization).toBe(`Basic ${basic}`);
    const snippet = outcome.attempt.responseSnippet!;
    for (const secret of ["pa55word", basic, "t0k3n-abc", "qtok3n"]) {
      expect(snippet, secret).not.toContain(secret);
    }
    expect(snippet).toContain('"X-Api-Key":"***"');
    expect(snippet).toContain('"authorization":"Basic ***"');
    expect(snippet).toContain("https://ops:***@client.example/hook?token=***&id=7");
    // A transport error quoting the URL is logged the same way.
    sender.answer = (request) => ({ error: `cannot reach ${request.url}` });
    const failed = await attemptDelivery(deps, delivery(), own, { manual: false });
    expect(failed.attempt.error).toBe(
      "cannot reach https://ops:***@client.example/hook?token=***&id=7",
    );
    // A secret too short to tell from the text around it is left alone, not every "k" masked.
    sender.answer = () => ({ statusCode: 500, body: "bad key k" });
    const short = await attemptDelivery(deps, delivery(), webhook, { manual: false });
    expect(short.attempt.responseSnippet).toBe("bad key k");
  });

  it("sends credentials with a stray percent sign as written instead of failing the delivery", async () => {
    sender.answer = () => ({ statusCode: 200 });
    const endpoint = "https://ops:100%zz@client.example/hook";
    const outcome = await attemptDelivery(
      deps,
      delivery(),
      { ...webhook, endpoint },
      { manual: false },
    );
    expect(outcome.state).toBe("delivered");
    expect(sender.requests.at(-1)!.headers.authorization).toBe(
      `Basic ${Buffer.from("ops:100%zz").toString("base64")}`,
    );
  });
});
