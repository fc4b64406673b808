import type { Catalogue } from "../catalogue/catalogue.ts";
import type { FulfilmentConfig } from "../config/fulfilment-config.ts";
import type { Rng } from "../core/rng.ts";
import type { StoreRepositories } from "../store/store.ts";
import type { DeviceRow, DeviceWithPatient, Ms } from "../store/types.ts";
import type { ReplacementRow } from "../store/types-hardware.ts";
import type { ShipmentPatch, ShipmentRow } from "../store/types-shipments.ts";
import { AccountBoxes, startBilling } from "./billing-start.ts";
import { describeStep } from "./carrier-history.ts";
import type { PendingEvents } from "./events.ts";
import { GATEWAY } from "./replacement-waits.ts";

import { PICKED_UP, type ShipmentStep } from "./shipment-flow.ts";
import {
  type ShippedHardware,
  shipReplacementHardware,
  shipRequestHardware,
} from "./shipment-hardware.ts";
import { planNext, shipmentRng, transitPlan } from "./shipment-plan.ts";
import { ACTIVE, type FulfilmentStatus } from "./statuses.ts";
import { drawHub, drawTracking, type Tracking } from "./tracking.ts";

/** What every shipment transition needs beside the transaction. */
export interface ShipmentDeps {
  readonly catalogue: Catalogue;
  readonly config: FulfilmentConfig;
}

export interface StepOptions {
  /** The carrier history's text, instead of the lab's. */
  readonly detail?: string | undefined;
  readonly location?: string | undefined;
  /** Dropshipped: ship this gateway id or IMEI instead of drawing one. */
  readonly hardwareUuid?: string | undefined;
}

/**
 * Applies one step to a shipment, in the caller's transaction (every status change is one
 * transaction, spec 3 via atomically()): the order's status follows (the device's `status`
 * field, or the replacement's), the step's effects happen (Dropshipped: hardware and tracking;
 * Delivered or picked up: billing starts and `hardware.delivered` fires; Cancelled: the order
 * is removed, spec 3), the carrier history gets a line, the next step is planned from the
 * shipment's Rng, and the events follow the commit: `fulfilment.status` (device requests) or
 * `replacement.status` (replacement orders), then `shipment.scheduled` for the simulator.
 *
 * Returns the shipment after the step, or null when Cancelled removed it. Conflicts (E_STORE_
 * CONFLICT) when another transition moved the shipment since `shipment` was read.
 */
export async function applyStep(
  tx: StoreRepositories,
  events: PendingEvents,
  deps: ShipmentDeps,
  shipment: ShipmentRow,
  step: ShipmentStep,
  at: Ms,
  opts: StepOptions = {},
): Promise<ShipmentRow | null> {
  const order = await loadOrder(tx, shipment);
  if (step === "Cancelled") {
    await cancel(tx, events, shipment, order, at);
    return null;
  }
  const nextStep = shipment.step + 1;
  const rng = shipmentRng(deps.config, shipment.id, nextStep);
  const status: string = step === PICKED_UP ? shipment.status : step;
  // Updated when the step was due, not when its timer ran (a restart's catch-up).
  const patch: { -readonly [K in keyof ShipmentPatch]: ShipmentPatch[K] } = {
    status,
    step: nextStep,
    modified: at,
  };
  if (shipment.status === "Client Action Required" && status !== shipment.status) {
    patch.reason = null;
  }
  let location: string | null = opts.location ?? null;
  let hardware: ShippedHardware | null = null;
  let delivered: "doorstep" | "pickup" | null = null;
  switch (step) {
    case "Dropshipped": {
      const tracking = drawTracking(deps.config, rng.fork("tracking"));
      hardware = await shipHardware(tx, events, deps, order, rng, at, opts.hardwareUuid, tracking);
      Object.assign(patch, tracking, transitPlan(deps.config, rng, at), {
        shipsDevice: hardware.shipsDevice,
        shipsGateway: hardware.shipsGateway,
        hardwareUuid: hardware.hardwareUuid,
        shippedOn: at,
      });
      break;
    }
    case "In Transit":
      patch.scansDone = shipment.scansDone + 1;
      location ??= drawHub(rng.fork("hub"));
      break;
    case "Out for Delivery":
      patch.attempts = shipment.attempts + 1;
      break;
    case "Available for Pickup":
      location ??= cityOf(order);
      break;
    case "Delivered":
      delivered = "doorstep";
      patch.signedBy = shipment.requireSignature ? signerOf(order) : null;
      break;
    case PICKED_UP:
      delivered = "pickup";
      location ??= cityOf(order);
      break;
  }
  if (delivered !== null) {
    patch.deliveredOn = at;
    patch.deliveredVia = delivered;
  }
  const planned = planNext(deps.config, rng, { ...shipment, ...patch } as ShipmentRow, at);
  patch.nextStatus = planned?.status ?? null;
  patch.nextAt = planned?.at ?? null;
  const updated = await tx.shipments.update(shipment.id, patch, { expectStep: shipment.step });
  await tx.shipments.addEvent(shipment.id, {
    status: step,
    at,
    detail: opts.detail ?? describeStep(updated, step),
    location,
  });
  if (step !== PICKED_UP) await announce(tx, events, updated, order, status, at);
  else await recordPickup(tx, updated);
  if (delivered !== null) await handOver(tx, events, updated, order, delivered, at);
  scheduled(events, updated);
  return updated;
}

/** The order behind a shipment: its device (with patient), or its replacement too. */
export interface Order {
  readonly device: DeviceWithPatient;
  readonly replacement: ReplacementRow | null;
}

export async function loadOrder(tx: StoreRepositories, shipment: ShipmentRow): Promise<Order> {
  const device = await tx.devices.get(shipment.accountId, shipment.deviceId);
  const replacement =
    shipment.replacementId === null
      ? null
      : await tx.replacements.get(shipment.accountId, shipment.replacementId);
  if (device === null || (shipment.kind === "replacement" && replacement === null)) {
    throw new Error(`shipment ${shipment.id} has lost its order`);
  }
  return { device, replacement };
}

/** Tells the simulator the shipment's next transition (or that it has none). */
export function scheduled(events: PendingEvents, shipment: ShipmentRow): void {
  events.add("shipment.scheduled", {
    shipmentId: shipment.id,
    step: shipment.step,
    nextStatus: shipment.nextStatus,
    nextAt: shipment.nextAt,
  });
}

/**
 * The order's status follows the shipment, with its event: a device request's fulfilment
 * webhook (spec 6.2, tracking_link once it shipped) or a replacement's special-order one.
 */
export async function announce(
  tx: StoreRepositories,
  events: PendingEvents,
  shipment: ShipmentRow,
  order: Order,
  status: string,
  at: Ms,
): Promise<void> {
  const { accountId } = shipment;
  if (shipment.kind === "replacement") {
    const replacement = await tx.replacements.update(accountId, shipment.replacementId!, {
      status,
      ...(shipment.hardwareUuid === null ? {} : { newHardwareUuid: shipment.hardwareUuid }),
      shippedOn: shipment.shippedOn,
      deliveredOn: shipment.deliveredOn,
      trackingLink: shipment.trackingLink,
      modified: at,
    });
    events.add("replacement.status", { accountId, replacement, status, at });
    return;
  }
  const device = await tx.devices.update(accountId, order.device.id, { status });
  events.add("fulfilment.status", {
    accountId,
    device,
    patientExternalId: order.device.patient?.externalId ?? null,
    status: status as FulfilmentStatus,
    previousHardwareUuid: null,
    reason: shipment.reason,
    trackingLink: shipment.trackingLink,
    at,
  });
}

/**
 * A package held for pickup was collected: no status and no webhook (spec 6.2: a carrier-held
 * package fires Available for Pickup, never Delivered), but a replacement's read carries
 * delivered_on from now, as its special-order webhooks would (README "Payloads": "delivered_on
 * once delivered (or collected)"). A device request has no such field of its own.
 */
async function recordPickup(tx: StoreRepositories, shipment: ShipmentRow): Promise<void> {
  if (shipment.kind !== "replacement") return;
  await tx.replacements.update(shipment.accountId, shipment.replacementId!, {
    deliveredOn: shipment.deliveredOn,
    modified: shipment.modified,
  });
}

function shipHardware(
  tx: StoreRepositories,
  events: PendingEvents,
  deps: ShipmentDeps,
  order: Order,
  rng: Rng,
  at: Ms,
  imposed: string | undefined,
  tracking: Tracking,
): Promise<ShippedHardware> {
  if (order.replacement !== null) {
    return shipReplacementHardware(tx, events, {
      catalogue: deps.catalogue,
      replacement: order.replacement,
      rng,
      at,
      imposed,
      trackingLink: tracking.trackingLink,
    });
  }
  return shipRequestHardware(tx, events, {
    catalogue: deps.catalogue,
    device: order.device,
    patientExternalId: order.device.patient?.externalId ?? null,
    rng,
    at,
    imposed,
  });
}

/**
 * Spec 3 "pending device order → cancelled → Cancelled: order is removed and no status is
 * stored; the webhook is the only record". The device record (or the replacement) goes, its
 * shipment and history with it; the event carries the order as it was.
 */
async function cancel(
  tx: StoreRepositories,
  events: PendingEvents,
  shipment: ShipmentRow,
  order: Order,
  at: Ms,
): Promise<void> {
  const { accountId } = shipment;
  if (order.replacement !== null) {
    await tx.replacements.delete(accountId, order.replacement.id);
    events.add("replacement.status", {
      accountId,
      replacement: { ...order.replacement, status: "Cancelled", modified: at },
      status: "Cancelled",
      at,
    });
  } else {
    const { patient, ...device } = order.device;
    await tx.devices.delete(accountId, device.id);
    // Its supply orders still pending go with it, as an unlink removes them (stopForUnlink):
    // they would ship, and bill, supplies for a device that no longer exists (spec 3: removed).
    await removePendingSupplyOrders(tx, accountId, device.id);
    events.add("fulfilment.status", {
      accountId,
      device: { ...device, status: "Cancelled", modified: at } satisfies DeviceRow,
      patientExternalId: patient?.externalId ?? null,
      status: "Cancelled",
      previousHardwareUuid: null,
      reason: shipment.reason,
      trackingLink: null,
      at,
    });
  }
  events.add("shipment.scheduled", {
    shipmentId: shipment.id,
    step: shipment.step + 1,
    nextStatus: null,
    nextAt: null,
  });
}

/**
 * The hardware is with the patient: the devices it puts to use start to bill (README "Billing",
 * billing-start.ts), and `hardware.delivered` tells scenarios which gateway and devices to
 * power on.
 */
async function handOver(
  tx: StoreRepositories,
  events: PendingEvents,
  shipment: ShipmentRow,
  order: Order,
  via: "doorstep" | "pickup",
  at: Ms,
): Promise<void> {
  const { accountId } = shipment;
  const boxes = new AccountBoxes(tx, accountId, shipment);
  const inUse = await startBilling(tx, boxes, shipment, via, at);
  let devices: DeviceRow[];
  if (shipment.kind === "device") {
    // Its device (ship_gateway_only: the one the patient has, in use once its gateway is here),
    // and the devices that joined the gateway in it and were waiting for it.
    const device = await tx.devices.get(accountId, shipment.deviceId);
    const own = device !== null && shipment.shipsDevice !== false ? [stripPatient(device)] : [];
    devices = [...own, ...inUse.filter((d) => own.every((o) => o.id !== d.id))];
  } else if (shipment.hardwareUuid === null) {
    // Only the device's own unit (a gateway device replaced without its gateway).
    devices = [stripPatient(order.device)];
  } else {
    const { rows } = await tx.devices.list(accountId, {
      hardwareUuidIexact: shipment.hardwareUuid,
    });
    // A replacement gateway (or IMEI) carries every device of the old one: those with the
    // patient, not one whose own box is still in the mail (it comes with that box).
    const here: DeviceRow[] = [];
    for (const row of rows) {
      if (!(await boxes.deviceHere(row))) continue;
      // Replaced lasts while the replacement travels (spec 3: not shown after): with the patient,
      // its devices are in use again, Active as on hardware in hand (README "Fulfilment").
      here.push(
        row.status === "Replaced"
          ? await tx.devices.update(accountId, row.id, { status: ACTIVE })
          : stripPatient(row),
      );
    }
    devices = here;
  }
  // The gateway to power on: the one the order's device is on now (a replacement gateway may
  // have moved it since its box shipped), unless it is still in another box (a device that
  // joined it while it was in the mail, a replacement device for a box held with it): it comes
  // with that box.
  const hardware = order.device.hardwareUuid;
  const here = await boxes.hardwareHere(hardware);
  const gateway = hardware === null || !here ? null : await tx.gateways.get(hardware);
  events.add("hardware.delivered", {
    accountId,
    orderId: shipment.id,
    kind: shipment.kind,
    via,
    patientExternalId: order.device.patient?.externalId ?? null,
    gatewayUuid: gateway?.gatewayUuid ?? null,
    devices,
    // A replacement names "Gateway" and/or the device's own type: the latter is a new unit.
    replacedUnits: order.replacement?.deviceTypes.some((t) => t !== GATEWAY)
      ? [order.device.id]
      : [],
    signedBy: shipment.signedBy,
    at,
  });
}

function stripPatient(device: DeviceWithPatient): DeviceRow {
  const { patient: _patient, ...row } = device;
  return row;
}

/** Who signs for a require_signature package: the recipient as the carrier records it. */
function signerOf(order: Order): string {
  const name = order.replacement?.shippingName ?? order.device.patient?.name ?? null;
  return (name ?? "RECIPIENT").toUpperCase();
}

function cityOf(order: Order): string | null {
  const r = order.replacement;
  const p = order.device.patient;
  const city = r?.shippingCity ?? p?.city ?? null;
  const state = r?.shippingState ?? p?.state ?? null;
  return city === null ? null : state === null ? city : `${city}, ${state.toUpperCase()}`;
}

/** A device's supply orders not yet fulfilled, removed (its request cancelled, or unlinked). */
export async function removePendingSupplyOrders(
  tx: StoreRepositories,
  accountId: string,
  deviceId: string,
): Promise<void> {
  const pending = await tx.supplyRequests.list(accountId, {
    forDeviceId: deviceId,
    fulfilled: false,
  });
  for (const order of pending.rows) await tx.supplyRequests.delete(accountId, order.id);
}
