import type { FulfilmentConfig } from "../config/fulfilment-config.ts";
import { MESSAGES, notADictionaryBody } from "../core/drf-fields.ts";
import { readText } from "../core/drf-read.ts";
import { RpmlabError } from "../core/errors.ts";
import { FieldErrorCollector, isPlainObject } from "../core/field-errors.ts";
import type { StoreRepositories } from "../store/store.ts";
import type { DeviceWithPatient, ListOptions, ListResult, Ms } from "../store/types.ts";
import type { ReplacementRow } from "../store/types-hardware.ts";
import { atomically, type DeviceServiceDeps } from "./deps.ts";
import { isUuid } from "./identifiers.ts";
import {
  alreadyOnOrder,
  deviceAlreadyComing,
  GATEWAY,
  gatewayNotWithPatient,
  NO_WAITS,
  notWithPatient,
  replacementWaits,
  stillInTheMail,
  type Waits,
} from "./replacement-waits.ts";
import { openShipment } from "./shipment-intake.ts";
import { SHIPPING_FIELDS } from "./shipping-fields.ts";

/**
 * Replacement statuses (spec: not shown): the fulfilment statuses its shipment moves through,
 * from Ready to Ship (or On Hold) to Delivered, each with a `replacement.status` event.
 */
export const REPLACEMENT_REQUESTED = "Ready to Ship";
export const REPLACEMENT_SHIPPED = "Dropshipped";

/** An hwi-replacements record (spec 2.7: fields not shown; rpmlab's choice). Times epoch ms. */
export interface ReplacementRecord {
  readonly id: string;
  readonly hwi_device_id: string;
  readonly device_types: ReadonlyArray<{ readonly name: string }>;
  readonly shipping_name: string | null;
  readonly shipping_address: string | null;
  readonly shipping_city: string | null;
  readonly shipping_state: string | null;
  readonly shipping_zip_code: string | null;
  readonly notify_emails: string | null;
  readonly status: string | null;
  /** The device's hardware_uuid when the replacement was requested. */
  readonly previous_hardware_uuid: string | null;
  /** The replacement gateway or IMEI, once shipped. */
  readonly new_hardware_uuid: string | null;
  readonly created: Ms;
  readonly modified: Ms;
  /** Spec 6.2: special-order reads carry created_on, updated_on, shipped_on, delivered_on. */
  readonly created_on: Ms;
  readonly updated_on: Ms;
  readonly shipped_on: Ms | null;
  readonly delivered_on: Ms | null;
  readonly tracking_link: string | null;
}

export function replacementRecord(r: ReplacementRow): ReplacementRecord {
  return {
    id: r.id,
    hwi_device_id: r.deviceId,
    device_types: r.deviceTypes.map((name) => ({ name })),
    shipping_name: r.shippingName,
    shipping_address: r.shippingAddress,
    shipping_city: r.shippingCity,
    shipping_state: r.shippingState,
    shipping_zip_code: r.shippingZipCode,
    notify_emails: r.notifyEmails,
    status: r.status,
    previous_hardware_uuid: r.previousHardwareUuid,
    new_hardware_uuid: r.newHardwareUuid,
    created: r.created,
    modified: r.modified,
    created_on: r.created,
    updated_on: r.modified,
    shipped_on: r.shippedOn,
    delivered_on: r.deliveredOn,
    tracking_link: r.trackingLink,
  };
}

/**
 * POST and GET hwi-replacements/ (spec 4.3 "replacement-order endpoint"; wire-formats
 * "Replacements"). A replacement keeps the original device record: no new device, no
 * duplicate-order flag (a duplicate is refused when ordered, replacement-waits.ts), the
 * device's status unchanged until the replacement ships. Its shipment opens at once (Ready
 * to Ship, or On Hold on a stock shortage) and the fulfilment simulator moves it to
 * Delivered; at Dropshipped the hardware changes (shipment-hardware.ts). device_types names
 * "Gateway" and/or the device's own type (current or legacy name; stored under the current
 * one). Shipping fields are all or none: none means the replacement comes from the client's
 * bulk inventory (it still moves through the shipment statuses).
 */
export class Replacements {
  constructor(
    private readonly deps: DeviceServiceDeps & { readonly fulfilment: FulfilmentConfig },
  ) {}

  async create(accountId: string, body: unknown): Promise<ReplacementRow> {
    const errors = new FieldErrorCollector();
    if (!isPlainObject(body)) {
      errors.add("non_field_errors", notADictionaryBody(body));
      errors.throwIfAny();
    }
    const input = body as Record<string, unknown>;
    return atomically(this.deps, async (tx, events) => {
      // Checked in the transaction that places the order: an order of the device placed
      // meanwhile (a client's double submit) is then one of its waits, and only one box ships.
      const device = await this.readDevice(errors, accountId, input.hwi_device_id, tx);
      const waits =
        device === undefined
          ? NO_WAITS
          : await replacementWaits({ store: tx, catalogue: this.deps.catalogue }, device);
      const deviceTypes = this.readDeviceTypes(errors, device, input.device_types, waits);
      const shipping = readShipping(errors, input);
      const notifyEmails = readText(errors, ["notify_emails"], input.notify_emails, {
        allowNull: true,
        allowBlank: true,
        maxLength: 1000,
      });
      errors.throwIfAny();
      const at = this.deps.clock.now();
      const created = await tx.replacements.create(accountId, {
        deviceId: device!.id,
        deviceTypes: deviceTypes!,
        ...shipping,
        notifyEmails: notifyEmails ?? null,
        previousHardwareUuid: device!.hardwareUuid,
        status: REPLACEMENT_REQUESTED,
      });
      const shipment = await openShipment(
        tx,
        events,
        { catalogue: this.deps.catalogue, config: this.deps.fulfilment },
        {
          accountId,
          id: created.id,
          kind: "replacement",
          deviceId: created.deviceId,
          replacementId: created.id,
          heldFor: null,
          requireSignature: false,
          shipGatewayOnly: false,
          deliveryType: null,
          at,
        },
      );
      const replacement =
        shipment.status === created.status
          ? created
          : await tx.replacements.update(accountId, created.id, { status: shipment.status });
      events.add("replacement.status", {
        accountId,
        replacement,
        status: shipment.status,
        at,
      });
      return replacement;
    });
  }

  /** Spec 4.3: "replacements returns the full set"; oldest first. */
  async list(accountId: string, page?: ListOptions): Promise<ListResult<ReplacementRecord>> {
    const result = await this.deps.store.replacements.list(accountId, {}, page);
    const rows = result.rows.map(replacementRecord);
    return result.total === undefined ? { rows } : { rows, total: result.total };
  }

  async get(accountId: string, id: string): Promise<ReplacementRecord> {
    const row = await this.deps.store.replacements.get(accountId, id);
    if (row === null) {
      throw new RpmlabError("E_STORE_NOT_FOUND", `replacement ${id} not found`, { id });
    }
    return replacementRecord(row);
  }

  private async readDevice(
    errors: FieldErrorCollector,
    accountId: string,
    value: unknown,
    repos: StoreRepositories,
  ) {
    const id = readText(errors, ["hwi_device_id"], value, { required: true });
    if (typeof id !== "string") return undefined;
    if (!isUuid(id)) {
      errors.add("hwi_device_id", `"${id}" is not a valid UUID.`);
      return undefined;
    }
    const device = await repos.devices.get(accountId, id.toLowerCase());
    if (device === null) errors.add("hwi_device_id", `Invalid pk "${id}" - object does not exist.`);
    const problem = device === null ? null : notWithPatient(device);
    if (problem !== null) {
      errors.add("hwi_device_id", problem);
      return undefined;
    }
    return device ?? undefined;
  }

  private readDeviceTypes(
    errors: FieldErrorCollector,
    device: DeviceWithPatient | undefined,
    value: unknown,
    waits: Waits,
  ): string[] | undefined {
    if (value === undefined || value === null) {
      errors.add("device_types", value === null ? MESSAGES.null : MESSAGES.required);
      return undefined;
    }
    if (!Array.isArray(value)) {
      errors.add("device_types", MESSAGES.list(value));
      return undefined;
    }
    if (value.length === 0) {
      errors.add("device_types", "This list may not be empty.");
      return undefined;
    }
    const names: string[] = [];
    value.forEach((item, i) => {
      const name = itemName(errors, i, item);
      if (name === undefined) return;
      const problem = device === undefined ? null : this.typeProblem(device, name, waits);
      if (problem !== null) errors.add("device_types", `Item ${i + 1}: ${problem}`);
      else if (device !== undefined) {
        const canonical = name === GATEWAY ? GATEWAY : this.deps.catalogue.get(name).name;
        if (!names.includes(canonical)) names.push(canonical);
      }
    });
    return names;
  }

  /** Why `name` cannot be replaced on this device, or null. */
  private typeProblem(
    device: DeviceWithPatient,
    name: string,
    { inTheMail, onOrder, deviceComing }: Waits,
  ): string | null {
    const own = this.deps.catalogue.find(device.name);
    if (name === GATEWAY) {
      if (own?.connectivity === "cellular") {
        return `${device.name} is a direct-cellular device: it has no gateway to replace.`;
      }
      const gatewayOrder = gatewayNotWithPatient(device);
      if (gatewayOrder !== null) return gatewayOrder;
      if (inTheMail !== null) return stillInTheMail(device, "gateway", inTheMail);
      if (onOrder !== null) return alreadyOnOrder(device, "gateway", onOrder);
      if (device.hardwareUuid === null) {
        return `device ${device.id} has no gateway (hardware_uuid is null): there is nothing to replace.`;
      }
      return null;
    }
    const profile = this.deps.catalogue.find(name);
    if (profile === undefined) {
      return `"${name}" is not a valid device type: use "${GATEWAY}" or the device's type (${device.name}).`;
    }
    if (profile.name !== device.name) {
      return `"${name}" is not the type of device ${device.id} (${device.name}); a replacement keeps the device's type.`;
    }
    // A direct-cellular device's replacement unit is its new IMEI: the same wait.
    if (inTheMail !== null && profile.identity === "imei") {
      return stillInTheMail(device, "IMEI", inTheMail);
    }
    if (onOrder !== null && profile.identity === "imei") {
      return alreadyOnOrder(device, "IMEI", onOrder);
    }
    if (deviceComing !== null) return deviceAlreadyComing(device, deviceComing);
    return null;
  }
}

/**
 * The name of device_types item `i` (`{"name": …}`, a DRF CharField: a number is its text), or
 * undefined after adding what is wrong with it under device_types, naming the item and its key:
 * a bare string (`["Gateway"]`) is not an item, and a name of the wrong type is not a missing one.
 */
function itemName(errors: FieldErrorCollector, i: number, item: unknown): string | undefined {
  const at = `Item ${i + 1}:`;
  if (!isPlainObject(item)) {
    errors.add("device_types", `${at} ${MESSAGES.dictionary(item)}`);
    return undefined;
  }
  const own = new FieldErrorCollector();
  const name = readText(own, ["name"], item.name, { required: true });
  for (const message of (own.fields().name ?? []) as string[]) {
    errors.add("device_types", `${at} name: ${message}`);
  }
  return typeof name === "string" ? name : undefined;
}

/** All five shipping fields, or none (bulk inventory). */
function readShipping(errors: FieldErrorCollector, input: Record<string, unknown>) {
  const given = (v: unknown) => v !== undefined && v !== null && v !== "";
  const anySent = SHIPPING_FIELDS.some(([wire]) => given(input[wire]));
  const out: Record<string, string | null> = {};
  for (const [wire, field] of SHIPPING_FIELDS) {
    const text = readText(errors, [wire], input[wire], { allowNull: true, allowBlank: true });
    if (anySent && (text ?? null) === null && !errors.has(wire)) {
      errors.add(
        wire,
        "This field is required when any shipping field is sent (all five or none).",
      );
    }
    out[field] = text ?? null;
  }
  return out;
}
