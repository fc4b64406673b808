import type { Catalogue } from "../catalogue/catalogue.ts";
import type { FulfilmentConfig } from "../config/fulfilment-config.ts";
import type { Clock } from "../core/clock.ts";
import { MESSAGES } from "../core/drf-fields.ts";
import { readText } from "../core/drf-read.ts";
import { RpmlabError } from "../core/errors.ts";
import { FieldErrorCollector, isPlainObject } from "../core/field-errors.ts";
import { atomically } from "../fulfilment/deps.ts";
import type { FulfilmentEventSink } from "../fulfilment/events.ts";
import { normalizeGatewayUuid, normalizeImei } from "../fulfilment/identifiers.ts";
import { SHIPPING_FIELDS } from "../fulfilment/shipping-fields.ts";
import type { Store, StoreRepositories } from "../store/store.ts";
import type { DeviceWithPatient, ListOptions, ListResult } from "../store/types.ts";
import type {
  NewSupplyRequest,
  SupplyRequestFilter,
  SupplyRequestRow,
} from "../store/types-asr.ts";
import type { SupplyCatalogue, SupplyType } from "./supply-catalogue.ts";
import { supplyOrderChanged } from "./supply-events.ts";
import { shipsAt } from "./supply-timeline.ts";

export interface AsrDeps {
  readonly store: Store;
  readonly clock: Clock;
  readonly supplies: SupplyCatalogue;
  readonly catalogue: Catalogue;
  readonly events: FulfilmentEventSink;
  /** Shipping durations, seed and tracking links: the fulfilment simulator's. */
  readonly fulfilment: FulfilmentConfig;
}

type Shipping = Pick<NewSupplyRequest, (typeof SHIPPING_FIELDS)[number][1]>;

/** An order to place: what a POST or the automatic reorder decided (validated). */
export type SupplyOrder = Pick<
  NewSupplyRequest,
  | "origin"
  | "gatewayId"
  | "imei"
  | "hardwareUuid"
  | "relatedDeviceId"
  | "forDeviceId"
  | "patientExternalId"
  | "notifyEmails"
> & { readonly type: SupplyType; readonly shipping: Shipping };

/**
 * ASR supply requests (spec 2.7, 3, 4.5): placing one (validated field by field, 400 keyed by
 * field), listing, and removing a pending one. A placed order ships on the clock
 * (supply-timeline.ts, SupplyShipping); each step posts a special-order webhook.
 */
export class SupplyRequests {
  constructor(private readonly deps: AsrDeps) {}

  async create(accountId: string, body: unknown): Promise<SupplyRequestRow> {
    const order = await this.read(accountId, body);
    return this.place(accountId, order);
  }

  /** Places a validated order: one transaction with its webhook; shipping is armed on commit. */
  place(accountId: string, order: SupplyOrder): Promise<SupplyRequestRow> {
    return atomically(this.deps, (tx, events) => placeIn(tx, events, this.deps, accountId, order));
  }

  get(accountId: string, id: string): Promise<SupplyRequestRow | null> {
    return this.deps.store.supplyRequests.get(accountId, id);
  }

  list(
    accountId: string,
    filter: SupplyRequestFilter,
    page?: ListOptions,
  ): Promise<ListResult<SupplyRequestRow>> {
    return this.deps.store.supplyRequests.list(accountId, filter, page);
  }

  /**
   * Spec 3: a pending request is removed (204); E_STORE_NOT_FOUND for an unknown id,
   * E_API_VALIDATION keyed `id` for one that shipped already (it can no longer be called back).
   */
  async delete(accountId: string, id: string): Promise<void> {
    const { supplyRequests } = this.deps.store;
    if (await supplyRequests.delete(accountId, id)) return;
    const row = await supplyRequests.get(accountId, id);
    if (row === null) {
      throw new RpmlabError("E_STORE_NOT_FOUND", "No SupplyRequest matches the given query.", {
        id,
      });
    }
    const errors = new FieldErrorCollector();
    errors.add("id", "Only a pending supply request can be deleted; this one has shipped.");
    errors.throwIfAny();
  }

  private async read(accountId: string, body: unknown): Promise<SupplyOrder> {
    const errors = new FieldErrorCollector();
    if (!isPlainObject(body)) {
      errors.add("non_field_errors", body === null ? MESSAGES.noData : MESSAGES.dictionary(body));
      errors.throwIfAny();
    }
    const input = body as Record<string, unknown>;
    const type = this.readType(errors, input.supply_name);
    const text = (field: string, maxLength = 255) =>
      readText(errors, [field], input[field], { allowNull: true, allowBlank: true, maxLength });
    const gatewayId = text("gateway_id") ?? null;
    const imei = text("imei") ?? null;
    const relatedId = text("related_client_device_id") ?? null;
    const shipping = {} as Record<string, string>;
    // Spec 2.7: all five are required.
    for (const [wire, field] of SHIPPING_FIELDS) {
      const value = readText(errors, [wire], input[wire], { required: true });
      if (typeof value === "string") shipping[field] = value;
    }
    const notifyEmails = text("notify_emails", 1000) ?? null;
    const related = await this.readRelated(errors, accountId, relatedId, type);
    const hardware = await this.readHardware(errors, accountId, { gatewayId, imei }, related, type);
    errors.throwIfAny();
    // The device the supply is for: the one named, else the one on the hardware it fits (on a
    // gateway shared by two patients, the glucometer's strips are the glucometer's patient's).
    const fits = (d: DeviceWithPatient) => type!.compatibleDevices.includes(d.name);
    const forDevice = related ?? hardware.devices.find(fits) ?? null;
    // Without gateway_id or imei, the related device's hardware stands in, and the order
    // shows it (spec 2.7: a hardware_uuid_required order carries the gateway id or IMEI).
    const standIn = gatewayId === null && imei === null ? hardware.uuid : null;
    const standInAs = (normalize: (raw: string) => string | null) =>
      standIn === null ? null : normalize(standIn);
    return {
      type: type!,
      origin: "client",
      // As the lab spells them everywhere else (wire-formats "Gateways": 12 upper-case hex
      // characters), so reads, search and webhooks show the id the hardware has.
      gatewayId: canonical(gatewayId, normalizeGatewayUuid) ?? standInAs(normalizeGatewayUuid),
      imei: canonical(imei, normalizeImei) ?? standInAs(normalizeImei),
      hardwareUuid: hardware.uuid,
      relatedDeviceId: related?.id ?? null,
      forDeviceId: forDevice?.id ?? null,
      patientExternalId: forDevice?.patient?.externalId ?? null,
      shipping: shipping as unknown as Shipping,
      notifyEmails,
    };
  }

  private readType(errors: FieldErrorCollector, value: unknown): SupplyType | undefined {
    const name = readText(errors, ["supply_name"], value, { required: true });
    if (typeof name !== "string") return undefined;
    const type = this.deps.supplies.byName(name);
    if (type === undefined) {
      errors.add(
        "supply_name",
        `"${name}" is not a supply type; names must match asr/supply-types/ exactly.`,
      );
    } else if (type.deprecated) {
      errors.add("supply_name", `"${name}" is deprecated and can no longer be ordered.`);
    }
    return type;
  }

  /** related_client_device_id: a device of the account the supply is compatible with (2.7). */
  private async readRelated(
    errors: FieldErrorCollector,
    accountId: string,
    id: string | null,
    type: SupplyType | undefined,
  ): Promise<DeviceWithPatient | null> {
    if (id === null) return null;
    const device = await this.deps.store.devices.get(accountId, id.toLowerCase());
    if (device === null) {
      errors.add("related_client_device_id", `No device of this account has id "${id}".`);
      return null;
    }
    // Spec 4.2: an unlinked device left its patient (unlink-gateway removed its pending orders);
    // a new order for it would ship, and bill, supplies for hardware no one uses.
    if (device.status === "Unlinked") {
      errors.add(
        "related_client_device_id",
        `Device ${device.id} is unlinked: it is no longer with a patient, so no supply is sent for it.`,
      );
      return null;
    }
    if (type !== undefined && !type.compatibleDevices.includes(device.name)) {
      errors.add(
        "related_client_device_id",
        `"${type.name}" does not fit a ${device.name}; it is made for: ${type.compatibleDevices.join(", ")}.`,
      );
    }
    return device;
  }

  /**
   * gateway_id (a gateway id) or imei (an IMEI): hardware of this account with a device on it
   * that the supply fits (2.7: "lets fulfilment choose a compatible supply"). A supply with
   * hardware_uuid_required needs one; without either, the related device's hardware.
   */
  private async readHardware(
    errors: FieldErrorCollector,
    accountId: string,
    sent: { gatewayId: string | null; imei: string | null },
    related: DeviceWithPatient | null,
    type: SupplyType | undefined,
  ): Promise<{ uuid: string | null; devices: DeviceWithPatient[] }> {
    const field = sent.gatewayId !== null ? "gateway_id" : "imei";
    const given = sent.gatewayId ?? sent.imei;
    if (given === null) {
      if (related?.hardwareUuid != null) {
        return { uuid: related.hardwareUuid, devices: [related] };
      }
      // An unknown or unlinked related device was refused already: that is the fault.
      if (type?.hardwareUuidRequired && !errors.has("related_client_device_id")) {
        errors.add(
          "gateway_id",
          `"${type.name}" is matched to the patient's device: send gateway_id, or imei for a direct-cellular device.`,
        );
      }
      return { uuid: null, devices: [] };
    }
    if (sent.gatewayId !== null && sent.imei !== null) {
      errors.add(
        "imei",
        "Send gateway_id or imei, not both (imei is empty when a gateway id is used).",
      );
    }
    const wanted = field === "gateway_id" ? normalizeGatewayUuid(given) : normalizeImei(given);
    if (wanted === null) {
      errors.add(
        field,
        field === "gateway_id"
          ? `"${given}" is not a gateway id (12 hexadecimal characters); a direct-cellular device's IMEI goes in imei.`
          : `"${given}" is not an IMEI (15 digits); a gateway's id goes in gateway_id.`,
      );
      return { uuid: null, devices: [] };
    }
    const { rows } = await this.deps.store.devices.list(accountId, { hardwareUuidIexact: wanted });
    if (rows.length === 0) {
      errors.add(
        field,
        `No device of this account is on ${field === "gateway_id" ? "gateway" : "IMEI"} "${given}".`,
      );
      return { uuid: null, devices: [] };
    }
    if (related !== null && related.hardwareUuid?.toLowerCase() !== wanted.toLowerCase()) {
      errors.add(
        "related_client_device_id",
        `Device ${related.id} is on ${related.hardwareUuid ?? "no hardware"}, not "${given}".`,
      );
    }
    if (type !== undefined && !rows.some((d) => type.compatibleDevices.includes(d.name))) {
      errors.add(
        field,
        `No device on "${given}" takes "${type.name}" (it has: ${[...new Set(rows.map((d) => d.name))].join(", ")}).`,
      );
    }
    return { uuid: rows[0]!.hardwareUuid, devices: rows };
  }
}

/** Inserts the order, due to ship after processing, and records its webhook (spec 6.1). */
export async function placeIn(
  tx: StoreRepositories,
  events: Parameters<typeof supplyOrderChanged>[1],
  deps: Pick<AsrDeps, "clock" | "supplies" | "fulfilment">,
  accountId: string,
  order: SupplyOrder,
): Promise<SupplyRequestRow> {
  const now = deps.clock.now();
  const { type } = order;
  const row = await tx.supplyRequests.create(accountId, {
    supplyTypeId: type.id,
    supplyName: type.name,
    gatewayId: order.gatewayId,
    imei: order.imei,
    hardwareUuid: order.hardwareUuid,
    relatedDeviceId: order.relatedDeviceId,
    forDeviceId: order.forDeviceId,
    patientExternalId: order.patientExternalId,
    ...order.shipping,
    notifyEmails: order.notifyEmails,
    origin: order.origin,
    strips: type.strips,
    upFrontCost: type.upFrontCost,
    shippingCost: type.shippingCost,
    nextAt: (id) => shipsAt(deps.fulfilment, id, now),
  });
  // Spec 6.1: supply orders emit special order events.
  await supplyOrderChanged(tx, events, deps.supplies, row);
  return row;
}

/** A valid id in its canonical form; blank or null as sent (refused earlier when invalid). */
function canonical(sent: string | null, normalize: (raw: string) => string | null): string | null {
  if (sent === null || sent.trim() === "") return sent;
  return normalize(sent) ?? sent;
}
