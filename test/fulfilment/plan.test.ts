import { describe, expect, it } from "vitest";
import { shipsAt } from "../../src/asr/supply-timeline.ts";
import { fulfilmentConfig } from "../../src/config/fulfilment-config.ts";
import { Rng } from "../../src/core/rng.ts";
import { parseIso } from "../../src/core/time.ts";
import { deviceDays } from "../../src/fulfilment/billing.ts";
import { addBusinessTime, utcWeekday } from "../../src/fulfilment/business-time.ts";
import { carrierEventApplies, pathTo } from "../../src/fulfilment/shipment-flow.ts";
import { type PlanState, planNext, shipmentRng } from "../../src/fulfilment/shipment-plan.ts";
import { drawTracking } from "../../src/fulfilment/tracking.ts";

const at = (iso: string) => parseIso(iso)!;
const H = 3_600_000;
const D = 24 * H;

const STATE: PlanState = {
  status: "Ready to Ship",
  reason: null,
  requireSignature: false,
  scansPlanned: 3,
  scansDone: 0,
  transitMs: 3 * D,
  attempts: 0,
  deliveredOn: null,
};

describe("business time (1–2 business days to ship)", () => {
  it("skips weekends", () => {
    expect(utcWeekday(at("2024-10-16T04:10:00Z"))).toBe(3);
    expect(addBusinessTime(at("2024-10-16T10:00:00Z"), D)).toBe(at("2024-10-17T10:00:00Z"));
    // Friday 20:00 + one business day: four hours on Friday, twenty on Monday.
    expect(addBusinessTime(at("2024-10-18T20:00:00Z"), D)).toBe(at("2024-10-21T20:00:00Z"));
    expect(addBusinessTime(at("2024-10-19T10:00:00Z"), H)).toBe(at("2024-10-21T01:00:00Z"));
    expect(addBusinessTime(at("2024-10-20T23:00:00Z"), 0)).toBe(at("2024-10-21T00:00:00Z"));
    expect(addBusinessTime(at("2024-10-16T10:00:00Z"), 5 * D)).toBe(at("2024-10-23T10:00:00Z"));
    // Ending with Friday is the start of Monday, never Saturday 00:00.
    expect(addBusinessTime(at("2024-10-18T00:00:00Z"), D)).toBe(at("2024-10-21T00:00:00Z"));
    expect(addBusinessTime(at("2024-10-17T00:00:00Z"), 2 * D)).toBe(at("2024-10-21T00:00:00Z"));
  });
});

describe("the shipment graph", () => {
  it("finds the carrier's way to a status, and refuses what no carrier does", () => {
    expect(pathTo("Ready to Ship", "Delivered")).toEqual([
      "Dropshipped",
      "In Transit",
      "Out for Delivery",
      "Delivered",
    ]);
    expect(pathTo("On Hold", "Dropshipped")).toEqual(["Ready to Ship", "Dropshipped"]);
    expect(pathTo("Delivery Issue", "Delivered")).toEqual(["Out for Delivery", "Delivered"]);
    expect(pathTo("In Transit", "In Transit")).toEqual(["In Transit"]);
    expect(pathTo("Ready to Ship", "Cancelled")).toEqual(["Cancelled"]);
    expect(pathTo("Dropshipped", "Cancelled")).toBeNull();
    expect(pathTo("Client Action Required", "Ready to Ship")).toBeNull();
    expect(pathTo("Available for Pickup", "Delivered")).toBeNull();
    expect(pathTo("Delivered", "In Transit")).toBeNull();
    expect(pathTo("Ready to Ship", "Unlinked")).toBeNull();
    expect(pathTo("Ready to Ship", "Ready to Ship")).toBeNull();
  });

  it("takes carrier events only where a carrier could make them", () => {
    expect(carrierEventApplies("scan", "Dropshipped", false)).toBe(true);
    expect(carrierEventApplies("delivered", "Out for Delivery", false)).toBe(true);
    expect(carrierEventApplies("delivered", "In Transit", false)).toBe(false);
    expect(carrierEventApplies("picked_up", "Available for Pickup", false)).toBe(true);
    expect(carrierEventApplies("picked_up", "Available for Pickup", true)).toBe(false);
    expect(carrierEventApplies("held_at_facility", "Ready to Ship", false)).toBe(false);
  });
});

describe("planning", () => {
  const config = fulfilmentConfig();

  it("draws the same next step from the same seed, shipment and step", () => {
    const t = at("2024-10-16T04:10:00Z");
    const plan = (seed: string, id: string, step: number) =>
      planNext(
        fulfilmentConfig({ seed }),
        shipmentRng(fulfilmentConfig({ seed }), id, step),
        STATE,
        t,
      );
    expect(plan("a", "s1", 1)).toEqual(plan("a", "s1", 1));
    const draws = new Set(
      ["a", "b", "c"].flatMap((seed) =>
        ["s1", "s2"].flatMap((id) => [1, 2].map((step) => plan(seed, id, step)!.at)),
      ),
    );
    expect(draws.size).toBe(12);
    for (const drawn of draws) {
      expect(drawn - t).toBeGreaterThanOrEqual(D);
      expect(drawn - t).toBeLessThanOrEqual(2 * D);
    }
  });

  it("waits where nothing happens on its own, and compresses time by time_scale", () => {
    const rng = new Rng("x");
    const t = 0;
    expect(
      planNext(config, rng, { ...STATE, status: "Client Action Required", reason: "address" }, t),
    ).toBeNull();
    expect(
      planNext(
        config,
        rng,
        { ...STATE, status: "Client Action Required", reason: "duplicate submission: x" },
        t,
      ),
    ).toEqual({ status: "Cancelled", at: 3 * D });
    expect(planNext(config, rng, { ...STATE, status: "Delivered" }, t)).toBeNull();
    expect(
      planNext(config, rng, { ...STATE, status: "Available for Pickup", deliveredOn: 5 }, t),
    ).toBeNull();
    const fast = fulfilmentConfig({ time_scale: 1440 });
    const step = planNext(fast, new Rng("y"), { ...STATE, status: "On Hold" }, t)!;
    expect(step.status).toBe("Ready to Ship");
    expect(step.at).toBeGreaterThanOrEqual((2 * D) / 1440);
    expect(step.at).toBeLessThanOrEqual((7 * D) / 1440);
  });

  it("counts a weekend before time_scale divides the wait, for devices and supply orders alike", () => {
    // processing: exactly one business day. From Saturday noon: all of Monday, done 60 h later.
    const fast = fulfilmentConfig({ time_scale: 1440, durations: { processing: "1d" } });
    const saturday = at("2026-11-28T12:00:00Z");
    const device = planNext(fast, new Rng("d"), STATE, saturday)!;
    expect(device).toEqual({ status: "Dropshipped", at: saturday + (60 * H) / 1440 });
    expect(shipsAt(fast, "supply-1", saturday)).toBe(saturday + (60 * H) / 1440);
    // At real speed the same day.
    const real = fulfilmentConfig({ durations: { processing: "1d" } });
    expect(shipsAt(real, "supply-1", saturday)).toBe(at("2026-12-01T00:00:00Z"));
  });

  it("moves In Transit through its planned scans, then out for delivery (or held)", () => {
    const rng = new Rng("z");
    expect(planNext(config, rng, { ...STATE, status: "In Transit", scansDone: 1 }, 0)?.status).toBe(
      "In Transit",
    );
    expect(planNext(config, rng, { ...STATE, status: "In Transit", scansDone: 3 }, 0)?.status).toBe(
      "Out for Delivery",
    );
    const held = fulfilmentConfig({ probabilities: { carrier_hold: 1 } });
    expect(planNext(held, rng, { ...STATE, status: "In Transit", scansDone: 3 }, 0)?.status).toBe(
      "Available for Pickup",
    );
    const failing = fulfilmentConfig({ probabilities: { delivery_issue: 1 } });
    expect(planNext(failing, rng, { ...STATE, status: "Out for Delivery" }, 0)?.status).toBe(
      "Delivery Issue",
    );
    expect(
      planNext(failing, rng, { ...STATE, status: "Delivery Issue", attempts: 2 }, 0)?.status,
    ).toBe("Out for Delivery");
    expect(
      planNext(failing, rng, { ...STATE, status: "Delivery Issue", attempts: 3 }, 0)?.status,
    ).toBe("Available for Pickup");
  });
});

describe("tracking", () => {
  it("gives each carrier's number its real shape, under the configured link base", () => {
    const shapes = { ups: /^1Z[0-9A-Z]{6}03\d{8}$/, fedex: /^\d{12}$/, usps: /^94001\d{17}$/ };
    for (const carrier of ["ups", "fedex", "usps"] as const) {
      const config = fulfilmentConfig({
        carriers: [carrier],
        tracking_base_url: "https://t.example/x/",
      });
      const t = drawTracking(config, new Rng(carrier));
      expect(t.trackingNumber).toMatch(shapes[carrier]);
      expect(t.trackingLink).toBe(`https://t.example/x/${carrier}/${t.trackingNumber}`);
    }
  });
});

describe("tracking numbers' check digits", () => {
  // As tracking-number validators check them (UPS 1Z mod 10, letters as (code - 3) mod 10;
  // FedEx Express weights 1, 3, 7 from the right, mod 11 mod 10; USPS IMpb mod 10, weights
  // 3, 1 from the right): a number that fails is refused by integrations that validate it.
  const digit = (c: string) => (/\d/.test(c) ? Number(c) : (c.charCodeAt(0) - 3) % 10);
  const valid = {
    ups: (n: string) => {
      let total = 0;
      [...n.slice(2, 17)].forEach((c, i) => {
        total += digit(c) * (i % 2 === 1 ? 2 : 1);
      });
      return (10 - (total % 10)) % 10 === Number(n[17]);
    },
    fedex: (n: string) => {
      const body = [...n.slice(0, 11)].reverse();
      const total = body.reduce((sum, c, i) => sum + Number(c) * [1, 3, 7][i % 3]!, 0);
      return (total % 11) % 10 === Number(n[11]);
    },
    usps: (n: string) => {
      const body = [...n.slice(0, -1)].reverse();
      const total = body.reduce((sum, c, i) => sum + Number(c) * (i % 2 === 0 ? 3 : 1), 0);
      return (10 - (total % 10)) % 10 === Number(n.at(-1));
    },
  };

  it("ends every carrier's number with its check digit", () => {
    for (const carrier of ["ups", "fedex", "usps"] as const) {
      const config = fulfilmentConfig({ carriers: [carrier] });
      for (let i = 0; i < 50; i++) {
        const { trackingNumber } = drawTracking(config, new Rng(`${carrier}-${i}`));
        expect(valid[carrier](trackingNumber), `${carrier} ${trackingNumber}`).toBe(true);
      }
    }
  });
});

describe("device-days", () => {
  const period = (started: number, ended: number | null) => ({
    id: 1,
    accountId: "a",
    deviceId: "d",
    started,
    ended,
    basis: "delivery" as const,
  });
  const oct = [at("2024-10-01T00:00:00Z"), at("2024-11-01T00:00:00Z")] as const;

  it("counts UTC days billable at any moment, within the period and up to now", () => {
    const now = at("2024-12-01T00:00:00Z");
    expect(
      deviceDays(period(at("2024-10-16T23:59:00Z"), at("2024-10-17T00:01:00Z")), ...oct, now),
    ).toBe(2);
    expect(
      deviceDays(period(at("2024-10-16T04:00:00Z"), at("2024-10-17T00:00:00Z")), ...oct, now),
    ).toBe(1);
    expect(deviceDays(period(at("2024-09-20T00:00:00Z"), null), ...oct, now)).toBe(31);
    expect(deviceDays(period(at("2024-10-31T12:00:00Z"), null), ...oct, now)).toBe(1);
    expect(deviceDays(period(at("2024-11-02T00:00:00Z"), null), ...oct, now)).toBe(0);
    expect(
      deviceDays(period(at("2024-10-10T00:00:00Z"), at("2024-10-10T00:00:00Z")), ...oct, now),
    ).toBe(0);
    const mid = at("2024-10-20T08:00:00Z");
    expect(deviceDays(period(at("2024-10-16T04:00:00Z"), null), ...oct, mid)).toBe(5);
    expect(deviceDays(period(mid, null), ...oct, mid)).toBe(1);
  });
});
