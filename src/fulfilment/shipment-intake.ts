import type { StoreRepositories } from "../store/store.ts";
import type { Ms } from "../store/types.ts";
import type { ShipmentKind, ShipmentRow } from "../store/types-shipments.ts";
import { describeStep } from "./carrier-history.ts";
import { atomically, type DeviceServiceDeps } from "./deps.ts";
import { fulfilmentRequestOf } from "./device-meta.ts";
import type { PendingEvents } from "./events.ts";
import { PENDING, type ShipmentStep } from "./shipment-flow.ts";
import { acceptance, planNext, shipmentRng } from "./shipment-plan.ts";
import {
  announce,
  loadOrder,
  removePendingSupplyOrders,
  type ShipmentDeps,
  scheduled,
} from "./shipment-transitions.ts";

export interface NewOrder {
  readonly accountId: string;
  /** The order's id: the hwi_device_id of a request, the replacement's id. */
  readonly id: string;
  readonly kind: ShipmentKind;
  readonly deviceId: string;
  readonly replacementId?: string | null;
  /** Why the request needs the client (Client Action Required, spec 3), else null. */
  readonly heldFor: string | null;
  readonly requireSignature: boolean;
  readonly shipGatewayOnly: boolean;
  readonly deliveryType: string | null;
  readonly at: Ms;
  /** Keep this status (an order that predates shipments) instead of deciding one. */
  readonly status?: string;
}

/**
 * Opens the shipment of a new order, in the caller's transaction (issue 4 §2: activating a
 * device with a shipping request, or ordering a replacement, starts a shipment). A request the
 * client must act on starts in Client Action Required; an accepted one in Ready to Ship, or On
 * Hold on a seeded stock shortage (spec 3). The order takes that status (the caller announces
 * it) and the next step is planned. Returns the shipment.
 */
export async function openShipment(
  tx: StoreRepositories,
  events: PendingEvents,
  deps: ShipmentDeps,
  order: NewOrder,
): Promise<ShipmentRow> {
  const rng = shipmentRng(deps.config, order.id, 0);
  const status =
    order.status ??
    (order.heldFor !== null ? "Client Action Required" : acceptance(deps.config, rng));
  const draft = {
    status,
    reason: order.heldFor,
    requireSignature: order.requireSignature,
    scansPlanned: 0,
    scansDone: 0,
    transitMs: 0,
    attempts: 0,
    deliveredOn: null,
  };
  const next = planNext(deps.config, rng, draft, order.at);
  const shipment = await tx.shipments.create(order.accountId, {
    id: order.id,
    kind: order.kind,
    deviceId: order.deviceId,
    replacementId: order.replacementId ?? null,
    status,
    reason: order.heldFor,
    requireSignature: order.requireSignature,
    shipGatewayOnly: order.shipGatewayOnly,
    deliveryType: order.deliveryType,
    nextStatus: next?.status ?? null,
    nextAt: next?.at ?? null,
  });
  await tx.shipments.addEvent(shipment.id, {
    status,
    at: order.at,
    detail: describeStep(shipment, status as ShipmentStep),
  });
  scheduled(events, shipment);
  return shipment;
}

/**
 * Spec 3 "address_status Invalid → confirm_address true → fulfilment no longer blocked": a
 * request held in Client Action Required for its address is accepted once the address problem
 * is gone — Ready to Ship, or On Hold on a stock shortage — with its webhook, in the caller's
 * transaction. Returns the shipment after the change.
 */
export async function acceptHeld(
  tx: StoreRepositories,
  events: PendingEvents,
  deps: ShipmentDeps,
  shipment: ShipmentRow,
  at: Ms,
): Promise<ShipmentRow> {
  const step = shipment.step + 1;
  const rng = shipmentRng(deps.config, shipment.id, step);
  const status = acceptance(deps.config, rng);
  const next = planNext(deps.config, rng, { ...shipment, status, reason: null }, at);
  const updated = await tx.shipments.update(
    shipment.id,
    { status, reason: null, step, nextStatus: next?.status ?? null, nextAt: next?.at ?? null },
    { expectStep: shipment.step },
  );
  await tx.shipments.addEvent(shipment.id, { status, at, detail: describeStep(updated, status) });
  await announce(tx, events, updated, await loadOrder(tx, updated), status, at);
  scheduled(events, updated);
  return updated;
}

/**
 * Spec 3 "pending request with an Invalid address → Client Action Required": an accepted request
 * not shipped yet (Ready to Ship, On Hold) whose patient's address went wrong after it was
 * accepted — changed to one that fails verification, or emptied — waits for the client again,
 * with its webhook, in the caller's transaction. Returns the shipment after the change.
 */
export async function holdForAddress(
  tx: StoreRepositories,
  events: PendingEvents,
  deps: ShipmentDeps,
  shipment: ShipmentRow,
  reason: string,
  at: Ms,
): Promise<ShipmentRow> {
  const step = shipment.step + 1;
  const status = "Client Action Required";
  const rng = shipmentRng(deps.config, shipment.id, step);
  const next = planNext(deps.config, rng, { ...shipment, status, reason }, at);
  const updated = await tx.shipments.update(
    shipment.id,
    { status, reason, step, nextStatus: next?.status ?? null, nextAt: next?.at ?? null },
    { expectStep: shipment.step },
  );
  await tx.shipments.addEvent(shipment.id, { status, at, detail: describeStep(updated, status) });
  await announce(tx, events, updated, await loadOrder(tx, updated), status, at);
  scheduled(events, updated);
  return updated;
}

/**
 * Spec 4.2: an unlinked device stops billing, and its orders stop moving — its request's
 * shipment, and its replacements', when not yet delivered, are halted (no further transitions;
 * the device's Unlinked webhook, and a stopped replacement's Unlinked special-order one, are the
 * last). A replacement left to ship would move whatever
 * devices hold the unlinked hardware id by then: another patient's, once it is reused.
 * A halted order's status is Unlinked (spec 3 "device with gateway → unlink → Unlinked"), as its
 * device's and its last webhook's: not the carrier status it stopped in, which it never leaves,
 * and not Cancelled, which removes a pending order and fires its own webhook (spec 3, 6.2).
 * Its ASR supply orders still pending are removed, as a client's DELETE removes one (spec 3):
 * strips for a meter the patient no longer uses would ship and bill (spec 1.4) for nothing.
 * Shipped ones are on their way and are delivered. In the caller's transaction.
 */
export async function stopForUnlink(
  tx: StoreRepositories,
  events: PendingEvents,
  args: { readonly accountId: string; readonly deviceIds: readonly string[]; readonly at: Ms },
): Promise<void> {
  const { accountId, deviceIds, at } = args;
  await tx.billingPeriods.close(accountId, deviceIds, at);
  for (const id of deviceIds) {
    await removePendingSupplyOrders(tx, accountId, id);
    const replacements = await tx.replacements.list(accountId, { deviceId: id });
    for (const shipmentId of [id, ...replacements.rows.map((r) => r.id)]) {
      await haltForUnlink(tx, events, accountId, shipmentId, at);
    }
  }
}

const UNLINKED = "Unlinked";

async function haltForUnlink(
  tx: StoreRepositories,
  events: PendingEvents,
  accountId: string,
  shipmentId: string,
  at: Ms,
): Promise<void> {
  const shipment = await tx.shipments.get(shipmentId);
  if (shipment === null || shipment.accountId !== accountId) return;
  if (shipment.deliveredOn !== null || shipment.halted !== null) return;
  const halted = await tx.shipments.update(
    shipmentId,
    {
      status: UNLINKED,
      step: shipment.step + 1,
      nextStatus: null,
      nextAt: null,
      halted: "unlinked",
    },
    { expectStep: shipment.step },
  );
  if (shipment.replacementId !== null) {
    // Its status changed, so its special-order webhook fires, as for every other status of a
    // replacement (Cancelled too): a client following it by webhook would otherwise last have
    // seen Ready to Ship or In Transit while hwi-replacements/ reads Unlinked (spec 6.1, 6.2).
    const replacement = await tx.replacements.update(accountId, shipment.replacementId, {
      status: UNLINKED,
    });
    events.add("replacement.status", { accountId, replacement, status: UNLINKED, at });
  }
  await tx.shipments.addEvent(shipmentId, {
    status: UNLINKED,
    at,
    detail: `Stopped in ${shipment.status}: the device was unlinked`,
  });
  scheduled(events, halted);
}

/**
 * Orders of a store from before shipments (migration 0004) get theirs, keeping their status, so
 * the simulator moves them on like any other. Returns how many. Run by the simulator at start.
 */
export async function trackLegacyOrders(deps: DeviceServiceDeps & ShipmentDeps): Promise<number> {
  const { store } = deps;
  let tracked = 0;
  const track = (order: NewOrder) =>
    atomically(deps, async (tx, events) => {
      if ((await tx.shipments.get(order.id)) !== null) return;
      await openShipment(tx, events, deps, order);
      tracked++;
    });
  for (const account of await store.accounts.list()) {
    const at = deps.clock.now();
    const { rows } = await store.devices.list(account.id, { status: PENDING });
    for (const device of rows) {
      const request = fulfilmentRequestOf(device.metaData);
      if (device.hardwareUuid !== null || request === null) continue;
      if ((await store.shipments.get(device.id)) !== null) continue;
      await track({
        accountId: account.id,
        id: device.id,
        kind: "device",
        deviceId: device.id,
        heldFor: request.reason,
        requireSignature: device.requireSignature,
        shipGatewayOnly: device.shipGatewayOnly,
        deliveryType: request.delivery_type,
        at,
        status: device.status,
      });
    }
    const replacements = await store.replacements.list(account.id);
    for (const r of replacements.rows) {
      if (!(PENDING as readonly (string | null)[]).includes(r.status)) continue;
      if ((await store.shipments.get(r.id)) !== null) continue;
      await track({
        accountId: account.id,
        id: r.id,
        kind: "replacement",
        deviceId: r.deviceId,
        replacementId: r.id,
        heldFor: null,
        requireSignature: false,
        shipGatewayOnly: false,
        deliveryType: null,
        at,
        status: r.status!,
      });
    }
  }
  return tracked;
}
