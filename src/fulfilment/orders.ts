import type { FulfilmentConfig } from "../config/fulfilment-config.ts";
import { MESSAGES } from "../core/drf-fields.ts";
import { readText } from "../core/drf-read.ts";
import { RpmlabError } from "../core/errors.ts";
import { FieldErrorCollector, fieldError, isPlainObject } from "../core/field-errors.ts";
import type { StoreRepositories } from "../store/store.ts";
import type { ListOptions, ListResult, Ms } from "../store/types.ts";
import type { ShipmentFilter, ShipmentKind, ShipmentRow } from "../store/types-shipments.ts";
import { atomically, type DeviceServiceDeps } from "./deps.ts";
import type { PendingEvents } from "./events.ts";
import { type OrderRecord, orderRecord } from "./order-view.ts";
import { reviewRequests } from "./request-review.ts";
import {
  CARRIER_EVENT_CHOICES,
  CARRIER_EVENT_NAMES,
  CARRIER_EVENTS,
  carrierEventApplies,
  carrierEventNamed,
  FINAL,
  nextStatuses,
  PENDING,
  pathTo,
  type ShipmentStep,
} from "./shipment-flow.ts";
import { applyStep, type ShipmentDeps, type StepOptions } from "./shipment-transitions.ts";
import { FULFILMENT_STATUSES, type FulfilmentStatus, SHIPPED_FILTER } from "./statuses.ts";

export interface OrdersDeps extends DeviceServiceDeps {
  readonly fulfilment: FulfilmentConfig;
}

/** The admin listing's filters, as the query string gives them. */
export interface OrderQuery {
  /** A fulfilment status, `shipped` (spec 3's filter) or `pending` (not shipped yet). */
  readonly status?: string | undefined;
  /** A client domain. */
  readonly account?: string | undefined;
  readonly kind?: string | undefined;
}

/** What a timer's transition came to. */
export type DueOutcome = "applied" | "stale" | "early";

/**
 * The orders behind the fulfilment simulator (issue 4 §2 "Admin"): list them, move one to a
 * status along the carrier's path, inject a carrier event — and, for the simulator, apply a
 * shipment's scheduled transition. Each status change is one transaction (atomically()), its
 * events emitted after the commit; a change that lost a race with another (the step moved on)
 * changes nothing.
 */
export class Orders {
  constructor(private readonly deps: OrdersDeps) {}

  private get shipping(): ShipmentDeps {
    return { catalogue: this.deps.catalogue, config: this.deps.fulfilment };
  }

  async list(query: OrderQuery, page?: ListOptions): Promise<ListResult<OrderRecord>> {
    const errors = new FieldErrorCollector();
    const filter: { -readonly [K in keyof ShipmentFilter]: ShipmentFilter[K] } = {};
    const status = query.status?.trim();
    if (status !== undefined && status !== "") {
      const lower = status.toLowerCase();
      // Every name in any case, as `shipped` and `pending` (the CLI's --status "in transit").
      const named = statusNamed(lower);
      if (lower === "shipped") filter.status = SHIPPED_FILTER;
      else if (lower === "pending") filter.status = PENDING;
      else if (named !== undefined) filter.status = named;
      else {
        errors.add(
          "status",
          `${MESSAGES.choice(status)} Use a fulfilment status (${FULFILMENT_STATUSES.join(", ")}), shipped or pending.`,
        );
      }
    }
    const kind = query.kind?.trim();
    if (kind !== undefined && kind !== "") {
      const named = kind.toLowerCase();
      if (named === "device" || named === "replacement") filter.kind = named as ShipmentKind;
      else errors.add("kind", `${MESSAGES.choice(kind)} Use device or replacement.`);
    }
    const account = query.account?.trim();
    if (account !== undefined && account !== "") {
      const row = await this.deps.store.accounts.getByClientDomain(account);
      if (row === null) errors.add("account", `No account has client domain "${account}".`);
      else filter.accountId = row.id;
    }
    errors.throwIfAny();
    const result = await this.deps.store.shipments.list(filter, page);
    const domains = await this.domains();
    const rows: OrderRecord[] = [];
    for (const s of result.rows) {
      rows.push(
        orderRecord(
          s,
          domains.get(s.accountId) ?? null,
          await this.deps.store.shipments.events(s.id),
        ),
      );
    }
    return result.total === undefined ? { rows } : { rows, total: result.total };
  }

  async get(id: string): Promise<OrderRecord> {
    const shipment = await this.shipment(id);
    const account = await this.deps.store.accounts.get(shipment.accountId);
    const history = await this.deps.store.shipments.events(shipment.id);
    return orderRecord(shipment, account?.clientDomain ?? null, history);
  }

  /**
   * Moves an order to `status` through every status on the carrier's way there (spec 3's
   * transitions; shipment-flow.ts), each with its webhook, at the lab's current time. Body:
   * `{status, hardware_uuid?, detail?}`; hardware_uuid ships that gateway id or IMEI when the
   * way passes Dropshipped. Cancelled removes a pending order (spec 3).
   */
  async advance(id: string, body: unknown): Promise<OrderRecord> {
    const errors = new FieldErrorCollector();
    const input = objectBody(errors, body);
    const target = readText(errors, ["status"], input.status, { required: true });
    const hardwareUuid = readText(errors, ["hardware_uuid"], input.hardware_uuid, {
      allowNull: true,
      allowBlank: true,
    });
    const detail = readText(errors, ["detail"], input.detail, {
      allowNull: true,
      allowBlank: true,
    });
    errors.throwIfAny();
    const start = await this.shipment(id);
    // In any case, as the list's filter takes it (the CLI's `orders advance ID "in transit"`).
    const status = statusNamed(target!.trim().toLowerCase());
    if (status === undefined) {
      throw fieldError(
        "status",
        `${MESSAGES.choice(target!)} Fulfilment statuses: ${FULFILMENT_STATUSES.join(", ")}.`,
      );
    }
    this.refuseStopped(start, "status");
    const path = pathTo(start.status, status);
    if (path === null) throw fieldError("status", cannotReach(start, status));
    if (hardwareUuid && !path.includes("Dropshipped")) {
      throw fieldError(
        "hardware_uuid",
        `Only an order that ships on the way (passes Dropshipped) takes a hardware_uuid; this one is ${start.status}.`,
      );
    }
    const before = status === "Cancelled" ? await this.get(id) : null;
    // One transaction for the whole way: a step refused on the way (the hardware_uuid at
    // Dropshipped) leaves the order where it was, with no webhook of the steps before it.
    const current = await this.apply(
      start,
      path.map((step) => ({
        step,
        opts: {
          detail: step === status ? (detail ?? undefined) : undefined,
          hardwareUuid: step === "Dropshipped" && hardwareUuid ? hardwareUuid : undefined,
        },
      })),
    );
    if (current === null) return cancelled(before!, this.deps.clock.now(), detail || undefined);
    return this.get(id);
  }

  /**
   * One carrier event (body `{event, detail?, location?}`): scan, out_for_delivery,
   * delivery_issue, held_at_facility, delivered, picked_up — only where a carrier could make it.
   */
  async inject(id: string, body: unknown): Promise<OrderRecord> {
    const errors = new FieldErrorCollector();
    const input = objectBody(errors, body);
    const event = readText(errors, ["event"], input.event, { required: true });
    const detail = readText(errors, ["detail"], input.detail, {
      allowNull: true,
      allowBlank: true,
    });
    const location = readText(errors, ["location"], input.location, {
      allowNull: true,
      allowBlank: true,
    });
    const carrierEvent = typeof event === "string" ? carrierEventNamed(event) : undefined;
    if (typeof event === "string" && carrierEvent === undefined) {
      errors.add(
        "event",
        `${MESSAGES.choice(event)} Carrier events (any case): ${CARRIER_EVENT_CHOICES}.`,
      );
    }
    errors.throwIfAny();
    const shipment = await this.shipment(id);
    this.refuseStopped(shipment, "event");
    const named = carrierEvent!; // required, and known: errors thrown otherwise
    if (!carrierEventApplies(named, shipment.status, shipment.deliveredOn !== null)) {
      const possible = CARRIER_EVENT_NAMES.filter((e) =>
        carrierEventApplies(e, shipment.status, shipment.deliveredOn !== null),
      );
      throw fieldError(
        "event",
        `A ${named} event cannot happen to an order in ${shipment.status}${
          shipment.deliveredOn !== null ? " (already with the patient)" : ""
        }. ${possible.length === 0 ? "No carrier event can." : `Possible now: ${possible.join(", ")}.`}`,
      );
    }
    await this.apply(shipment, [
      {
        step: CARRIER_EVENTS[named],
        opts: { detail: detail || undefined, location: location || undefined },
      },
    ]);
    return this.get(id);
  }

  /**
   * The simulator's timer for a shipment fired: applies its scheduled transition, at the time it
   * was due, unless the shipment moved on since the timer was armed (stale) or the transition is
   * not due yet (early: the timer is re-armed).
   */
  runDue(id: string, step: number): Promise<DueOutcome> {
    return atomically(this.deps, async (tx, events) => {
      const s = await tx.shipments.get(id);
      if (s === null || s.step !== step || s.nextStatus === null || s.nextAt === null) {
        return "stale";
      }
      if (s.nextAt > this.deps.clock.now()) return "early";
      await this.step(tx, events, s, s.nextStatus as ShipmentStep, s.nextAt);
      return "applied";
    });
  }

  /**
   * Status changes in one transaction, all or none, refused if the shipment moved meanwhile.
   * Null once Cancelled (always the last step).
   */
  private apply(
    seen: ShipmentRow,
    steps: readonly { readonly step: ShipmentStep; readonly opts: StepOptions }[],
  ): Promise<ShipmentRow | null> {
    return atomically(this.deps, async (tx, events) => {
      const current = await tx.shipments.get(seen.id);
      if (current === null || current.step !== seen.step) {
        throw new RpmlabError(
          "E_STORE_CONFLICT",
          `order ${seen.id} moved on meanwhile (it is now ${current?.status ?? "gone"}): look again and retry`,
          { id: seen.id },
        );
      }
      const at = this.deps.clock.now();
      let row: ShipmentRow | null = current;
      for (const { step, opts } of steps) row = await this.step(tx, events, row!, step, at, opts);
      return row;
    });
  }

  /**
   * A transition; a request Cancelled may leave its duplicates as the patient's only request
   * of that type: the earliest goes ahead (request-review.ts), instead of being cleaned up too.
   */
  private async step(
    tx: StoreRepositories,
    events: PendingEvents,
    shipment: ShipmentRow,
    step: ShipmentStep,
    at: Ms,
    opts: StepOptions = {},
  ): Promise<ShipmentRow | null> {
    if (step !== "Cancelled" || shipment.kind !== "device") {
      return applyStep(tx, events, this.shipping, shipment, step, at, opts);
    }
    const { accountId } = shipment;
    const patientId = (await tx.devices.get(accountId, shipment.deviceId))?.patientId ?? null;
    await applyStep(tx, events, this.shipping, shipment, step, at, opts);
    const patient = patientId === null ? null : await tx.patients.getById(accountId, patientId);
    if (patient !== null)
      await reviewRequests(tx, events, this.shipping, { accountId, patient, at });
    return null;
  }

  private async shipment(id: string): Promise<ShipmentRow> {
    const shipment = await this.deps.store.shipments.get(id.trim().toLowerCase());
    if (shipment === null) {
      throw new RpmlabError("E_STORE_NOT_FOUND", `No order has id "${id}".`, { id });
    }
    return shipment;
  }

  private refuseStopped(shipment: ShipmentRow, field: string): void {
    if (shipment.halted !== null) {
      throw fieldError(
        field,
        `Order ${shipment.id} no longer moves: its device was ${shipment.halted} (the order is ${shipment.status}).`,
      );
    }
  }

  private async domains(): Promise<Map<string, string>> {
    const accounts = await this.deps.store.accounts.list();
    return new Map(accounts.map((a) => [a.id, a.clientDomain]));
  }
}

function objectBody(errors: FieldErrorCollector, body: unknown): Record<string, unknown> {
  if (!isPlainObject(body)) {
    errors.add("non_field_errors", MESSAGES.dictionary(body));
    errors.throwIfAny();
  }
  return body as Record<string, unknown>;
}

/** The fulfilment status spelled `lower` in lower case. */
function statusNamed(lower: string): FulfilmentStatus | undefined {
  return FULFILMENT_STATUSES.find((s) => s.toLowerCase() === lower);
}

/** Why an order cannot get to `status`, and where it can go. */
function cannotReach(shipment: ShipmentRow, status: string): string {
  const from = shipment.status;
  if (status === "Replaced" || status === "Unlinked") {
    return `${status} is not a carrier status: Replaced fires when a replacement gateway ships (POST hwi-replacements/), Unlinked on unlink-gateway (spec 3).`;
  }
  if (from === "Client Action Required") {
    return `An order in Client Action Required waits for the client: fix the patient's address (or set confirm_address), or cancel it (status Cancelled). Reason: ${shipment.reason ?? "unknown"}.`;
  }
  if ((FINAL as readonly string[]).includes(from)) {
    return `The order is ${from}: nothing moves it any more.`;
  }
  if (from === "Available for Pickup" && shipment.deliveredOn !== null) {
    // Collected: the hardware is with the patient, as Delivered would say (spec 6.2: never fired).
    return `The order was collected by the patient from the carrier's facility (it stays Available for Pickup): nothing moves it any more.`;
  }
  if (from === status) return `The order is already ${from}.`;
  if (status === "Cancelled") {
    return `Only a pending order (${PENDING.join(", ")}) can be cancelled; this one is ${from} (spec 3).`;
  }
  if (from === "Available for Pickup") {
    const held = `inject the picked_up event when the patient collects it.`;
    return status === "Delivered"
      ? `A package held for pickup is never Delivered (spec 6.2); ${held}`
      : `A package held for pickup cannot get to ${status}: it waits at the carrier's facility; ${held}`;
  }
  const next = nextStatuses(from);
  return `An order in ${from} cannot get to ${status}; from ${from} a carrier moves it to ${next.join(", ")}.`;
}

function cancelled(before: OrderRecord, at: number, detail = "Order cancelled"): OrderRecord {
  return {
    ...before,
    status: "Cancelled",
    next_status: null,
    next_at: null,
    updated_on: at,
    removed: true,
    history: [...before.history, { status: "Cancelled", at, detail, location: null }],
  };
}
