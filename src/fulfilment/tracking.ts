import type { Carrier, FulfilmentConfig } from "../config/fulfilment-config.ts";
import type { Rng } from "../core/rng.ts";

/**
 * Carrier, tracking number and tracking link of a shipment, drawn from its Rng when it ships.
 * Numbers have each carrier's real shape (so integrations that validate them accept them) but
 * links point to `<tracking_base_url>/<carrier>/<number>`, by default under the reserved
 * `.test` domain (RFC 6761): a lab link never leads to a real carrier's page about a stranger's
 * package.
 */
export interface Tracking {
  readonly carrier: Carrier;
  readonly trackingNumber: string;
  readonly trackingLink: string;
}

const ALNUM = "0123456789ABCDEFGHJKLMNPRSTUVWXYZ";

export function drawTracking(config: FulfilmentConfig, rng: Rng): Tracking {
  const carrier = rng.pick(config.carriers);
  const digits = (n: number) => {
    let out = "";
    for (let i = 0; i < n; i++) out += String(rng.int(0, 9));
    return out;
  };
  let trackingNumber: string;
  switch (carrier) {
    case "ups": {
      // 1Z, a 6-character shipper number, a 2-digit service code, 8 digits (18 in all).
      let shipper = "";
      for (let i = 0; i < 6; i++) shipper += ALNUM[rng.int(0, ALNUM.length - 1)];
      trackingNumber = `1Z${shipper}03${digits(8)}`;
      break;
    }
    case "fedex":
      trackingNumber = digits(12);
      break;
    case "usps":
      // USPS Tracking: 22 digits starting 9400 1 (Priority Mail/First-Class Package).
      trackingNumber = `94001${digits(17)}`;
      break;
  }
  return {
    carrier,
    trackingNumber,
    trackingLink: `${config.trackingBaseUrl}/${carrier}/${trackingNumber}`,
  };
}

/** US carrier hubs a package is scanned at in transit (for the carrier history). */
const HUBS = [
  "Louisville, KY",
  "Memphis, TN",
  "Indianapolis, IN",
  "Dallas, TX",
  "Ontario, CA",
  "Chicago, IL",
  "Atlanta, GA",
  "Hodgkins, IL",
  "Phoenix, AZ",
  "Newark, NJ",
  "Salt Lake City, UT",
  "Kansas City, MO",
] as const;

export function drawHub(rng: Rng): string {
  return rng.pick(HUBS);
}
