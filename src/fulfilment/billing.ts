import type { Clock } from "../core/clock.ts";
import { isRpmlabError } from "../core/errors.ts";
import { FieldErrorCollector, fieldError } from "../core/field-errors.ts";
import { civilFromDays, daysFromCivil, MS_PER_DAY, toIsoMicros } from "../core/time.ts";
import type { Store } from "../store/store.ts";
import type { Ms } from "../store/types.ts";
import type { BillingBasis, BillingPeriodRow } from "../store/types-shipments.ts";

/**
 * What the vendor would bill (issue 4 §2 "Billing"): device-days per account over a period, and
 * the hardware shipped in it.
 *
 * A device is billable while its hardware is with the patient and linked to it: from activation
 * when the hardware was in hand (device.hardware_uuid sent), from delivery — Delivered, or the
 * patient collecting a package held for pickup — when the lab shipped it; until it is unlinked
 * (spec 4.2: unlink "so that billing for inactive devices stops"). A request never delivered,
 * or Cancelled, bills nothing. A replacement keeps the device billing (its record is kept, spec
 * 4.3). Billing starts once the device and the gateway it is on (unless direct-cellular) are
 * both with the patient, a device without its gateway sending nothing (spec 1.1): a device
 * that joined a gateway still in the mail bills from that gateway's delivery, and when the
 * device's own package never reached the patient, the replacement that completes it starts it
 * (billing-start.ts); one activated on a gateway id the lab has never seen (Unknown Gateway ID)
 * bills from that gateway's first check-in (gateway-adoption.ts). A device-day is a UTC calendar
 * day on which the device was billable at any moment.
 *
 * Hardware: each shipment counts the device and/or gateway in its box (ship_gateway_only: the
 * gateway only, spec 2.4 "only the gateway cost is billed"; a device joining the patient's
 * gateway: the device only).
 *
 * Supplies (spec 1.4: "supply charges accrue as orders ship and are billed at the end of the
 * month"): each ASR order that shipped in the period, at its prices when ordered.
 */

export interface BillingQuery {
  /** A client domain; every account when absent. */
  readonly account?: string | undefined;
  /** First day, YYYY-MM-DD (UTC). */
  readonly from?: string | undefined;
  /** Last day, inclusive, YYYY-MM-DD. */
  readonly to?: string | undefined;
  /** A calendar month, YYYY-MM, instead of from/to. */
  readonly month?: string | undefined;
}

export interface DeviceBilling {
  readonly hwi_device_id: string;
  readonly device_name: string | null;
  readonly basis: BillingBasis;
  readonly billable_from: Ms;
  /** Null while still billing. */
  readonly billable_until: Ms | null;
  readonly device_days: number;
}

/** An ASR supply order that shipped in the period (spec 1.4: charged as it ships). */
export interface SupplyCharge {
  readonly id: string;
  readonly supply_name: string;
  readonly shipped_on: Ms;
  readonly up_front_cost: string;
  readonly shipping_cost: string;
}

export interface AccountBilling {
  readonly account_id: string;
  readonly client_domain: string;
  readonly device_days: number;
  readonly devices: readonly DeviceBilling[];
  readonly hardware_shipped: { readonly devices: number; readonly gateways: number };
  readonly supplies: readonly SupplyCharge[];
  /** The supplies' up-front and shipping costs together, a decimal string (USD). */
  readonly supply_charges: string;
}

export interface BillingReport {
  /** First day (midnight UTC) and the day after the last (exclusive). */
  readonly from: Ms;
  readonly to: Ms;
  /** Days after the lab's clock are not billed yet. */
  readonly as_of: Ms;
  readonly device_days: number;
  readonly accounts: readonly AccountBilling[];
}

/**
 * UTC days on which the period was billable, within [from, to) and up to `now` (a device
 * billable at this moment counts today).
 */
export function deviceDays(period: BillingPeriodRow, from: Ms, to: Ms, now: Ms): number {
  const start = Math.max(period.started, from);
  const end = Math.min(period.ended ?? Number.POSITIVE_INFINITY, to, now + 1);
  if (end <= start) return 0;
  const first = Math.floor(start / MS_PER_DAY);
  const last = Math.floor((end - 1) / MS_PER_DAY);
  return last - first + 1;
}

export async function billingReport(
  deps: { readonly store: Store; readonly clock: Clock },
  query: BillingQuery,
): Promise<BillingReport> {
  const { store, clock } = deps;
  const now = clock.now();
  const errors = new FieldErrorCollector();
  // A bad period and an unknown account are reported together, not one per attempt.
  let range: { from: Ms; to: Ms } | undefined;
  try {
    range = period(query, now);
  } catch (error) {
    if (!isRpmlabError(error, "E_API_VALIDATION")) throw error;
    const fields = error.details.fields as Record<string, readonly string[]>;
    for (const [field, messages] of Object.entries(fields)) {
      for (const message of messages) errors.add(field, message);
    }
  }
  let accounts = await store.accounts.list();
  const domain = query.account?.trim();
  if (domain !== undefined && domain !== "") {
    const one = await store.accounts.getByClientDomain(domain);
    if (one === null) errors.add("account", `No account has client domain "${domain}".`);
    accounts = one === null ? [] : [one];
  }
  errors.throwIfAny();
  const { from, to } = range!;
  const out: AccountBilling[] = [];
  for (const account of accounts) {
    const periods = await store.billingPeriods.list({ accountId: account.id, from, to });
    const devices: DeviceBilling[] = [];
    for (const p of periods) {
      const days = deviceDays(p, from, to, now);
      if (days === 0) continue;
      const device = await store.devices.get(account.id, p.deviceId);
      devices.push({
        hwi_device_id: p.deviceId,
        device_name: device?.name ?? null,
        basis: p.basis,
        billable_from: p.started,
        billable_until: p.ended,
        device_days: days,
      });
    }
    const shipped = await store.shipments.shippedBetween(from, to, account.id);
    const supplies = (await store.supplyRequests.shippedBetween(from, to, account.id)).map(
      (r): SupplyCharge => ({
        id: r.id,
        supply_name: r.supplyName,
        shipped_on: r.shippedOn!,
        up_front_cost: r.upFrontCost,
        shipping_cost: r.shippingCost,
      }),
    );
    out.push({
      account_id: account.id,
      client_domain: account.clientDomain,
      device_days: devices.reduce((sum, d) => sum + d.device_days, 0),
      devices,
      hardware_shipped: {
        devices: shipped.filter((s) => s.shipsDevice === true).length,
        gateways: shipped.filter((s) => s.shipsGateway === true).length,
      },
      supplies,
      supply_charges: dollars(
        supplies.reduce((sum, c) => sum + cents(c.up_front_cost) + cents(c.shipping_cost), 0),
      ),
    });
  }
  out.sort((a, b) => a.client_domain.localeCompare(b.client_domain));
  return {
    from,
    to,
    as_of: now,
    device_days: out.reduce((sum, a) => sum + a.device_days, 0),
    accounts: out,
  };
}

/** "15.00" → 1500: sums in whole cents, never in binary fractions. */
function cents(amount: string): number {
  const [whole = "0", fraction = ""] = amount.split(".");
  return Number(whole) * 100 + Number(fraction.padEnd(2, "0").slice(0, 2));
}

function dollars(total: number): string {
  return `${Math.floor(total / 100)}.${String(total % 100).padStart(2, "0")}`;
}

const DAY_TEXT = /^(\d{4})-(\d{2})-(\d{2})$/;
const MONTH_TEXT = /^(\d{4})-(\d{2})$/;
/** 9999-12-31: a period ends the day after its last, which must still be a four-digit date. */
const LAST_DAY_MS = daysFromCivil(9999, 12, 31) * MS_PER_DAY;
const LAST_DAY_TEXT = "A billing period ends by 9999-12-30 (month 9999-11 at the latest).";

/** The report's days: a month, from/to (either defaulting to the month of `now`), or this month. */
function period(query: BillingQuery, now: Ms): { from: Ms; to: Ms } {
  const errors = new FieldErrorCollector();
  const today = civilFromDays(Math.floor(now / MS_PER_DAY));
  const monthStart = (year: number, month: number) => daysFromCivil(year, month, 1) * MS_PER_DAY;
  const nextMonth = (year: number, month: number) =>
    month === 12 ? monthStart(year + 1, 1) : monthStart(year, month + 1);
  const month = query.month?.trim();
  if (month) {
    if (query.from || query.to) errors.add("month", "Give month, or from and to, not both.");
    const m = MONTH_TEXT.exec(month);
    const [y, mo] = [Number(m?.[1]), Number(m?.[2])];
    if (m === null || mo < 1 || mo > 12) errors.add("month", `"${month}" is not a month: YYYY-MM.`);
    else if (y === 9999 && mo === 12) errors.add("month", LAST_DAY_TEXT);
    errors.throwIfAny();
    return { from: monthStart(y, mo), to: nextMonth(y, mo) };
  }
  const day = (field: "from" | "to", text: string | undefined): Ms | undefined => {
    const t = text?.trim();
    if (!t) return undefined;
    const m = DAY_TEXT.exec(t);
    const days = m === null ? NaN : daysFromCivil(Number(m[1]), Number(m[2]), Number(m[3]));
    const back = Number.isNaN(days) ? undefined : civilFromDays(days);
    if (back === undefined || back.month !== Number(m?.[2]) || back.day !== Number(m?.[3])) {
      errors.add(field, `"${t}" is not a date: YYYY-MM-DD.`);
      return undefined;
    }
    // The report's end is the day after the last: a four-digit year, as every time it writes.
    if (field === "to" && days * MS_PER_DAY >= LAST_DAY_MS) {
      errors.add(field, LAST_DAY_TEXT);
      return undefined;
    }
    return days * MS_PER_DAY;
  };
  const from = day("from", query.from) ?? monthStart(today.year, today.month);
  const last = day("to", query.to);
  errors.throwIfAny();
  const to = last === undefined ? nextMonth(today.year, today.month) : last + MS_PER_DAY;
  if (to <= from) {
    if (last === undefined) {
      // A from alone, after this month: keyed by from, the day the caller sent (not a `to`
      // it never sent, which a CLI could not name as an option).
      throw fieldError(
        "from",
        `The first day (${dayText(from)}) comes after the last (to: ${dayText(to - MS_PER_DAY)}, the last of this month by default).`,
      );
    }
    // Named with both days: a `to` alone is checked against a from that defaulted.
    const first = `${dayText(from)}${query.from?.trim() ? "" : ", the first of this month by default"}`;
    throw fieldError(
      "to",
      `The last day (${dayText(to - MS_PER_DAY)}) comes before the first (from: ${first}).`,
    );
  }
  return { from, to };
}

/** YYYY-MM-DD of a UTC day's start. */
function dayText(ms: Ms): string {
  return toIsoMicros(ms).slice(0, 10);
}
