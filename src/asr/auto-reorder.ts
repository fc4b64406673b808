import { ClockSweep } from "../core/clock-sweep.ts";
import type { Logger } from "../core/logger.ts";
import { MS_PER_HOUR } from "../core/time.ts";
import type { TimedWork } from "../core/timed-work.ts";
import { atomically } from "../fulfilment/deps.ts";
import type { StoreRepositories } from "../store/store.ts";
import type { DeviceWithPatient } from "../store/types.ts";
import type { AutoReorderSettings } from "../store/types-asr.ts";
import { type GlucometerSupplies, glucometerSupplies } from "./strip-estimate.ts";
import type { SupplyType } from "./supply-catalogue.ts";
import { type AsrDeps, placeIn } from "./supply-requests.ts";

/** What one sweep did. */
export interface ReorderSweep {
  readonly placed: number;
  /**
   * Glucometers below a threshold whose patient has no address to ship to: none, an incomplete
   * one, or one verification found Invalid that the client has not confirmed (spec 3).
   */
  readonly unshippable: number;
}

/**
 * Automatic reordering (spec 1.4: "can place orders automatically when thresholds are reached",
 * 4.5: estimated_strips_remaining "drives automatic reordering"). For each account with the ASR
 * module on and thresholds set, every glucometer's hardware is checked: fewer estimated strips
 * than `strips_below`, or fewer days of them at its recent daily use than `days_below` (none
 * left: fewer days than any, whatever the use), places one order of the account's strip supply
 * to the patient's address — unless a strip order for that meter has not been delivered yet (it
 * is on its way). The check runs hourly on the lab's clock (rpmlab's choice; the vendor does
 * not say how often it looks).
 */
export class AutoReorder implements TimedWork {
  private readonly hourly: ClockSweep;

  constructor(private readonly deps: AsrDeps & { readonly logger?: Logger | undefined }) {
    this.hourly = new ClockSweep(deps.clock, MS_PER_HOUR, () => this.sweepAndLog());
  }

  start(): void {
    this.hourly.start();
  }

  stop(): Promise<void> {
    return this.hourly.stop();
  }

  get busy(): boolean {
    return this.hourly.busy;
  }

  whenIdle(): Promise<unknown> {
    return this.hourly.whenIdle();
  }

  /** Checks every account's glucometers now. */
  async sweep(): Promise<ReorderSweep> {
    const { store, supplies } = this.deps;
    let placed = 0;
    let unshippable = 0;
    for (const { accountId, settings } of await store.asrSettings.autoReordering()) {
      const type = supplies.byName(settings.supplyName);
      // The catalogue may have changed since the thresholds were set.
      if (type === undefined || type.strips === null || type.deprecated) continue;
      const { rows } = await store.devices.list(accountId);
      const hardware = new Set(
        rows
          .filter((d) => supplies.usesStrips(d.name) && d.hardwareUuid !== null)
          .map((d) => d.hardwareUuid!),
      );
      for (const uuid of hardware) {
        const outcome = await this.check(accountId, settings, type, uuid);
        if (outcome === "placed") placed++;
        if (outcome === "unshippable") unshippable++;
      }
    }
    return { placed, unshippable };
  }

  /**
   * One glucometer's hardware, in one transaction: the estimate, the order on its way, and the
   * new order are read and written together, so a client's order meanwhile is never doubled.
   */
  private check(
    accountId: string,
    settings: AutoReorderSettings,
    type: SupplyType,
    uuid: string,
  ): Promise<"enough" | "on its way" | "unshippable" | "placed"> {
    return atomically(this.deps, async (tx, events) => {
      const { supplies, clock } = this.deps;
      const current = await glucometerSupplies(tx, supplies, accountId, uuid, clock.now());
      if (current === null || !below(settings, current)) return "enough";
      if (await onItsWay(tx, accountId, current.glucometers)) return "on its way";
      const glucometer = current.glucometers.find((d) => d.patient !== null);
      const shipping = glucometer === undefined ? null : addressOf(glucometer);
      if (glucometer === undefined || shipping === null) return "unshippable";
      const cellular = glucometer.sensorCode === null;
      await placeIn(tx, events, this.deps, accountId, {
        type,
        origin: "auto_reorder",
        gatewayId: cellular ? null : current.hardwareUuid,
        imei: cellular ? current.hardwareUuid : null,
        hardwareUuid: current.hardwareUuid,
        relatedDeviceId: glucometer.id,
        forDeviceId: glucometer.id,
        patientExternalId: glucometer.patient!.externalId,
        shipping,
        notifyEmails: glucometer.patient!.email,
      });
      return "placed";
    });
  }

  private async sweepAndLog(): Promise<void> {
    try {
      const { placed, unshippable } = await this.sweep();
      if (placed > 0) this.deps.logger?.info({ placed }, "supplies reordered automatically");
      if (unshippable > 0) {
        this.deps.logger?.warn(
          { patients: unshippable },
          "strips low, but the patient has no address to ship to (none, incomplete or Invalid)",
        );
      }
    } catch (error) {
      this.deps.logger?.error({ err: error }, "automatic reorder failed");
    }
  }
}

/** A strip order for one of these meters is pending or shipped and not delivered yet. */
async function onItsWay(
  tx: StoreRepositories,
  accountId: string,
  meters: readonly DeviceWithPatient[],
): Promise<boolean> {
  for (const meter of meters) {
    const { rows } = await tx.supplyRequests.list(accountId, {
      forDeviceId: meter.id,
      undelivered: true,
    });
    if (rows.some((r) => r.strips !== null)) return true;
  }
  return false;
}

function below(settings: AutoReorderSettings, current: GlucometerSupplies): boolean {
  const left = current.record.estimated_strips_remaining;
  if (settings.stripsBelow !== null && left < settings.stripsBelow) return true;
  if (settings.daysBelow === null) return false;
  // No strips last no days, whatever the use: a patient who ran out cannot test, so the recent
  // use falls to 0 and, going by it, the order the patient waits for would never come.
  if (left === 0) return true;
  const { perDay } = current;
  return perDay > 0 && left / perDay < settings.daysBelow;
}

/**
 * The patient's address (spec 2.1: all four fields, or none) as the order's shipping fields,
 * or null when one is missing or blank: spec 2.7 requires every shipping field, and a client's
 * own order with a blank one is refused ("This field may not be blank.").
 */
function addressOf(device: DeviceWithPatient) {
  const p = device.patient;
  if (p === null || (p.addressStatus === "Invalid" && !p.confirmAddress)) return null;
  const address = given(p.address);
  const city = given(p.city);
  const state = given(p.state);
  const zipCode = given(p.zipCode);
  if (address === null || city === null || state === null || zipCode === null) return null;
  return {
    shippingName: given(p.name) ?? p.externalId,
    shippingAddress: address,
    shippingCity: city,
    shippingState: state,
    shippingZipCode: zipCode,
  };
}

/** A text that says something: null, empty and whitespace-only say nothing. */
function given(text: string | null): string | null {
  return text === null || text.trim() === "" ? null : text;
}
