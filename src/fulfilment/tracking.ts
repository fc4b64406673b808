import type { Carrier, FulfilmentConfig } from "../config/fulfilment-config.ts";
import type { Rng } from "../core/rng.ts";

/**
 * Carrier, tracking number and tracking link of a shipment, drawn from its Rng when it ships.
 * Numbers have each carrier's real shape and check digit (so integrations that validate them
 * accept them) but
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
      // The last of the 8 is the check digit.
      const body = `${shipper}03${digits(7)}`;
      trackingNumber = `1Z${body}${upsCheckDigit(body)}`;
      break;
    }
    case "fedex": {
      const body = digits(11);
      trackingNumber = `${body}${fedexCheckDigit(body)}`;
      break;
    }
    case "usps": {
      // USPS Tracking: 22 digits starting 9400 1 (Priority Mail/First-Class Package).
      const body = `94001${digits(16)}`;
      trackingNumber = `${body}${uspsCheckDigit(body)}`;
      break;
    }
  }
  return {
    carrier,
    trackingNumber,
    trackingLink: `${config.trackingBaseUrl}/${carrier}/${trackingNumber}`,
  };
}

/**
 * UPS 1Z: the 15 characters after 1Z, letters as (character code - 3) mod 10, every second one
 * doubled, summed; the check digit takes the sum to a multiple of 10.
 */
function upsCheckDigit(body: string): number {
  let total = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    const value = c >= "0" && c <= "9" ? Number(c) : (c.charCodeAt(0) - 3) % 10;
    total += i % 2 === 1 ? value * 2 : value;
  }
  return (10 - (total % 10)) % 10;
}

/** FedEx Express 12 digits: the first 11 weighted 1, 3, 7, … from the right, mod 11, mod 10. */
function fedexCheckDigit(body: string): number {
  let total = 0;
  for (let i = 0; i < body.length; i++) {
    total += Number(body[body.length - 1 - i]) * [1, 3, 7][i % 3]!;
  }
  return (total % 11) % 10;
}

/** USPS IMpb (Publication 199): weights 3, 1, … from the right, to a multiple of 10. */
function uspsCheckDigit(body: string): number {
  let total = 0;
  for (let i = 0; i < body.length; i++) {
    total += Number(body[body.length - 1 - i]) * (i % 2 === 0 ? 3 : 1);
  }
  return (10 - (total % 10)) % 10;
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
