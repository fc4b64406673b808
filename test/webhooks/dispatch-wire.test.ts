import { describe, expect, it } from "vitest";
import type { WebhookRow } from "../../src/store/types-ingest.ts";
import type { AttemptOutcome, DeliveryRow } from "../../src/store/types-webhooks.ts";
import type { ClaimedDelivery } from "../../src/webhooks/dispatch-store.ts";
import {
  packClaims,
  packOutcomes,
  unpackClaims,
  unpackOutcomes,
} from "../../src/webhooks/dispatch-wire.ts";

const webhook = (id: string, signingSecret: string | null): WebhookRow => ({
  id,
  accountId: "acct-1",
  endpoint: `https://hooks.example/${id}`,
  authHeader: "X-Key",
  authKey: "k",
  event: "MEASUREMENT",
  postAsArray: false,
  enabledByDefault: true,
  signingSecret,
  created: 1_772_409_600_000,
  modified: 1_772_409_600_001,
});

const delivery = (id: string, over: Partial<DeliveryRow>): DeliveryRow => ({
  id,
  accountId: "acct-1",
  webhookId: "w1",
  event: "MEASUREMENT",
  body: `{"id":"${id}","value":"é ☃"}`,
  state: "pending",
  retry: true,
  test: false,
  attempts: 0,
  manualAttempts: 0,
  nextAttemptAt: 1_772_409_621_000,
  inFlight: true,
  hwiDeviceId: "F0A1B2C3D4E5",
  patientId: "p-1",
  measurementIds: [7],
  created: 1_772_409_600_000,
  modified: 1_772_409_600_500,
  ...over,
});

/** As postMessage carries it to the other thread. */
const acrossThreads = <T>(value: T): T => structuredClone(value);

describe("what crosses to the dispatch worker and back", () => {
  it("brings every claimed delivery back as it was, with its webhook or none", () => {
    const w1 = webhook("w1", null);
    const w2 = webhook("w2", "secret");
    const claimed: ClaimedDelivery[] = [
      { delivery: delivery("d1", {}), webhook: w1 },
      {
        delivery: delivery("d2", {
          webhookId: "w2",
          event: "FULFILLMENT",
          retry: false,
          test: true,
          inFlight: false,
          attempts: 3,
          manualAttempts: 1,
          nextAttemptAt: null,
          hwiDeviceId: null,
          patientId: null,
          measurementIds: null,
          state: "failed",
        }),
        webhook: w2,
      },
      { delivery: delivery("d3", { measurementIds: [] }), webhook: null },
      { delivery: delivery("d4", { measurementIds: [8, 9, 2 ** 40] }), webhook: w1 },
    ];
    expect(unpackClaims(acrossThreads(packClaims(claimed)))).toEqual(claimed);
  });

  it("brings every outcome back as it was: delivered, retried, failed by hand, with no request", () => {
    const attempt = {
      at: 1_772_409_600_123,
      endpoint: "https://hooks.example/w1",
      statusCode: 200,
      error: null,
      latencyMs: 0.731,
      responseSnippet: "ok",
      manual: false,
    };
    const outcomes: AttemptOutcome[] = [
      { deliveryId: "d1", attempt, state: "delivered", nextAttemptAt: null },
      {
        deliveryId: "d2",
        attempt: { ...attempt, statusCode: 503, responseSnippet: "busy" },
        state: "pending",
        nextAttemptAt: 1_772_409_660_000,
      },
      {
        deliveryId: "d3",
        attempt: { ...attempt, statusCode: null, error: "connect ECONNREFUSED", manual: true },
        state: null,
        nextAttemptAt: null,
      },
      {
        deliveryId: "d4",
        attempt: {
          ...attempt,
          endpoint: null,
          statusCode: null,
          error: "the webhook was deleted",
          latencyMs: 0,
          responseSnippet: null,
        },
        state: "failed",
        nextAttemptAt: null,
      },
    ];
    expect(unpackOutcomes(acrossThreads(packOutcomes(outcomes)))).toEqual(outcomes);
  });

  it("carries nothing for an empty round", () => {
    expect(unpackClaims(acrossThreads(packClaims([])))).toEqual([]);
    expect(unpackOutcomes(acrossThreads(packOutcomes([])))).toEqual([]);
  });
});
