import { MS_PER_DAY } from "../core/time.ts";
import type { StoreRepositories } from "../store/store.ts";
import type { DeviceWithPatient, Ms } from "../store/types.ts";
import type { SupplyCatalogue } from "./supply-catalogue.ts";

/** Strips in a glucometer's own box (README "ASR"): counted as sent with the meter. */
export const KIT_STRIPS = 50;
/** "Estimated daily use from recent activity" (spec 2.7): the last two weeks. */
const RECENT_DAYS = 14;

/** wire-formats "ASR": the glucometer supply record. */
export interface GlucometerSupplyRecord {
  readonly strips_sent: number;
  readonly estimated_strips_remaining: number;
  readonly average_measurements_per_day: number;
}

export interface GlucometerSupplies {
  /** The gateway id or IMEI as the device records spell it. */
  readonly hardwareUuid: string;
  /** The glucometers on it (one per gateway, spec 2.8), with their patients. */
  readonly glucometers: readonly DeviceWithPatient[];
  readonly record: GlucometerSupplyRecord;
  /** strips_sent minus the glucose readings, before the client's offset. */
  readonly counted: number;
  /** Recent daily use before rounding: a light user's 0.4 a day still runs out. */
  readonly perDay: number;
}

/**
 * Spec 2.7: strips sent (the meter's box and each replacement meter's, plus the strip orders
 * shipped for the meter, on this gateway or one it was on before a replacement), minus the
 * glucose readings the meter stored, plus the offset a PUT left for strips lost, client-provided or bought by the patient; shown
 * never below 0. Daily use: dailyUse, rounded. Null when no glucometer of the account is on
 * this gateway id or IMEI (any case, hyphens ignored).
 */
export async function glucometerSupplies(
  tx: StoreRepositories,
  supplies: SupplyCatalogue,
  accountId: string,
  hardware: string,
  now: Ms,
): Promise<GlucometerSupplies | null> {
  const wanted = hardware.trim().replace(/[-\s]/g, "");
  if (wanted === "") return null;
  const { rows } = await tx.devices.list(accountId, { hardwareUuidIexact: wanted });
  const glucometers = rows.filter((d) => supplies.usesStrips(d.name));
  if (glucometers.length === 0) return null;
  const hardwareUuid = glucometers[0]!.hardwareUuid!;
  const meters = glucometers.map((d) => d.id);
  const recentSince = now - RECENT_DAYS * MS_PER_DAY;
  const shipped = await tx.supplyRequests.stripsShipped(accountId, meters);
  const usage = await tx.glucometerSupplies.usage(accountId, meters, { since: recentSince, now });
  const offset = await tx.glucometerSupplies.offset(accountId, meters);
  const sent = KIT_STRIPS * (await meterBoxes(tx, accountId, meters)) + shipped;
  const counted = sent - usage.used;
  const perDay = dailyUse(usage, recentSince, now);
  return {
    hardwareUuid,
    glucometers,
    counted,
    perDay,
    record: {
      strips_sent: sent,
      estimated_strips_remaining: Math.max(0, counted + offset),
      average_measurements_per_day: Math.round(perDay),
    },
  };
}

/**
 * The meter boxes sent: each meter's own, and one for each replacement of the meter that has
 * shipped with a meter in it (a replacement is the catalogue's kit, "with test strips", as the
 * first was; the patient keeps the old strips, which fit the same meter). A replacement of the
 * gateway alone brings no strips.
 */
async function meterBoxes(
  tx: StoreRepositories,
  accountId: string,
  meters: readonly string[],
): Promise<number> {
  let boxes = meters.length;
  for (const deviceId of meters) {
    const { rows } = await tx.replacements.list(accountId, { deviceId });
    for (const replacement of rows) {
      if (replacement.shippedOn === null) continue;
      // Its shipment (same id) says what was in the box, decided when it shipped.
      if ((await tx.shipments.get(replacement.id))?.shipsDevice === true) boxes++;
    }
  }
  return boxes;
}

/**
 * Spec 2.7 "estimated daily use from recent activity": the glucose readings of the last 14 days
 * per day. A meter whose first reading is more recent has a shorter history, and the readings
 * are spread over that time as it is, unrounded (a whole day more for a history of one day and a
 * minute halved its figure): the first reading opens that time, so the readings after it are
 * the ones taken in it (a meter read 4 times a day shows 4, not 4 plus one over the days). In
 * its first day, the readings so far are that day's.
 */
function dailyUse(
  usage: { readonly recent: number; readonly first: Ms | null },
  recentSince: Ms,
  now: Ms,
): number {
  if (usage.first === null || usage.recent === 0) return 0;
  if (usage.first < recentSince) return usage.recent / RECENT_DAYS;
  const days = (now - usage.first) / MS_PER_DAY;
  return days < 1 ? usage.recent : (usage.recent - 1) / days;
}

/**
 * PUT estimated_strips_remaining (spec 4.5: "the value drives automatic reordering"): the
 * offset becomes whatever makes the estimate equal the value now; later readings count down
 * from it.
 */
export async function setStripsRemaining(
  tx: StoreRepositories,
  current: GlucometerSupplies,
  accountId: string,
  remaining: number,
): Promise<void> {
  // Kept on the first meter: the offsets of all of them add up to the one wanted.
  const [first, ...others] = current.glucometers.map((d) => d.id);
  const elsewhere = await tx.glucometerSupplies.offset(accountId, others);
  await tx.glucometerSupplies.setOffset(accountId, first!, remaining - current.counted - elsewhere);
}
