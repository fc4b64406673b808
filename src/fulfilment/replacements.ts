import type { FulfilmentConfig } from "../config/fulfilment-config.ts";
import { MESSAGES } from "../core/drf-fields.ts";
import { readText } from "../core/drf-read.ts";
import { RpmlabError } from "../core/errors.ts";
import { FieldErrorCollector, isPlainObject } from "../core/field-errors.ts";
import type { DeviceWithPatient, ListOptions, ListResult, Ms } from "../store/types.ts";
import type { ReplacementRow } from "../store/types-hardware.ts";
import { atomically, type DeviceServiceDeps } from "./deps.ts";
import { isUuid } from "./identifiers.ts";
import { openShipment } from "./shipment-intake.ts";
import { SHIPPING_FIELDS } from "./shipping-fields.ts";
import { ON_THE_WAY_STATUSES, PENDING_STATUSES } from "./statuses.ts";

/** wire-formats "Replacements": the name that asks for a replacement gateway. */
export const GATEWAY = "Gateway";

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
 * duplicate-order check, the device's status unchanged until the replacement ships. Its
 * shipment opens at once (Ready to Ship, or On Hold on a stock shortage) and the fulfilment
 * simulator moves it to Delivered; at Dropshipped the hardware changes (shipment-hardware.ts).
 * device_types names "Gateway" and/or the device's own type (current or legacy name; stored
 * under the current one). Shipping fields are all or none: none means the replacement comes
 * from the client's bulk inventory (it still moves through the shipment statuses).
 */
export class Replacements {
  constructor(
    private readonly deps: DeviceServiceDeps & { readonly fulfilment: FulfilmentConfig },
  ) {}

  async create(accountId: string, body: unknown): Promise<ReplacementRow> {
    const errors = new FieldErrorCollector();
    if (!isPlainObject(body)) {
      errors.add("non_field_errors", MESSAGES.dictionary(body));
      errors.throwIfAny();
    }
    const input = body as Record<string, unknown>;
    const device = await this.readDevice(errors, accountId, input.hwi_device_id);
    const inTheMail = device === undefined ? null : await this.hardwareInTheMail(device);
    const onOrder = device === undefined ? null : await this.hardwareOnOrder(device);
    const deviceTypes = this.readDeviceTypes(errors, device, input.device_types, {
      inTheMail,
      onOrder,
    });
    const shipping = readShipping(errors, input);
    const notifyEmails = readText(errors, ["notify_emails"], input.notify_emails, {
      allowNull: true,
      allowBlank: true,
      maxLength: 1000,
    });
    errors.throwIfAny();
    return atomically(this.deps, async (tx, events) => {
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

  private async readDevice(errors: FieldErrorCollector, accountId: string, value: unknown) {
    const id = readText(errors, ["hwi_device_id"], value, { required: true });
    if (typeof id !== "string") return undefined;
    if (!isUuid(id)) {
      errors.add("hwi_device_id", `"${id}" is not a valid UUID.`);
      return undefined;
    }
    const device = await this.deps.store.devices.get(accountId, id.toLowerCase());
    if (device === null) errors.add("hwi_device_id", `Invalid pk "${id}" - object does not exist.`);
    const problem = device === null ? null : notWithPatient(device);
    if (problem !== null) {
      errors.add("hwi_device_id", problem);
      return undefined;
    }
    return device ?? undefined;
  }

  /**
   * The replacement whose new hardware the device is on while the carrier still has it on its
   * way (Dropshipped … Delivery Issue), or null. Its gateway (or a direct-cellular device's
   * IMEI) is not with the patient: a second replacement of it would move the devices off hardware
   * still in the mail, as for a request whose own box is on its way (notWithPatient).
   */
  private async hardwareInTheMail(device: DeviceWithPatient): Promise<InTheMail | null> {
    if (device.hardwareUuid === null) return null;
    const { rows } = await this.deps.store.shipments.list({
      accountId: device.accountId,
      kind: "replacement",
      status: ON_THE_WAY_STATUSES,
    });
    const shipment = rows.find((s) => s.hardwareUuid === device.hardwareUuid);
    return shipment === undefined
      ? null
      : {
          replacementId: shipment.id,
          hardwareUuid: shipment.hardwareUuid!,
          status: shipment.status,
        };
  }

  /**
   * A replacement not shipped yet (Ready to Ship, On Hold) that will replace the hardware the
   * device is on: "Gateway" for a device on the same gateway (its box moves every device of it,
   * spec 4.3), or a direct-cellular device's own unit (a new IMEI), or null. A second one is a
   * duplicate order: both boxes would ship, and the second would move the devices off the
   * first's hardware, maybe still in the mail. Spec 4.3's "no duplicate-order flag" keeps a
   * replacement out of Client Action Required (no hold the client could lift), so the duplicate
   * is refused when ordered, like the hardware in the mail (hardwareInTheMail).
   */
  private async hardwareOnOrder(device: DeviceWithPatient): Promise<OnOrder | null> {
    if (device.hardwareUuid === null) return null;
    const { rows } = await this.deps.store.shipments.list({
      accountId: device.accountId,
      kind: "replacement",
      status: PENDING_STATUSES,
    });
    for (const shipment of rows) {
      const replacement = await this.deps.store.replacements.get(device.accountId, shipment.id);
      const other =
        shipment.deviceId === device.id
          ? device
          : await this.deps.store.devices.get(device.accountId, shipment.deviceId);
      if (replacement === null || other?.hardwareUuid !== device.hardwareUuid) continue;
      const cellular = this.deps.catalogue.find(other.name)?.identity === "imei";
      const newHardware = cellular
        ? replacement.deviceTypes.includes(other.name)
        : replacement.deviceTypes.includes(GATEWAY);
      if (newHardware) {
        return { replacementId: shipment.id, deviceId: other.id, status: shipment.status };
      }
    }
    return null;
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
    { inTheMail, onOrder }: Waits,
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

/**
 * Why the patient does not have the device to replace (spec 4.3 replaces hardware in use), or
 * null: an unlinked device left the patient (spec 4.2), a request not shipped yet is an order
 * to cancel or wait for, and one the carrier still has on its way (its gateway too) has not
 * reached the patient: a replacement gateway shipped now would move the devices off a gateway
 * still in the mail. A package held for pickup can be replaced: the patient may never collect
 * it (README "Billing": the replacement then bills). With ship_gateway_only the patient has had
 * the device all along (spec 2.4: only a gateway ships), so the device itself can be replaced
 * whatever its order's state; only "Gateway" waits for that gateway (gatewayNotWithPatient).
 */
function notWithPatient(device: DeviceWithPatient): string | null {
  if (device.status === "Unlinked") {
    return `Device ${device.id} is unlinked: it is no longer with a patient, there is nothing to replace.`;
  }
  if (device.shipGatewayOnly) return null;
  if ((PENDING_STATUSES as readonly string[]).includes(device.status)) {
    return `Device ${device.id} has not shipped yet (${device.status}): there is nothing to replace; cancel or wait for its order.`;
  }
  if ((ON_THE_WAY_STATUSES as readonly string[]).includes(device.status)) {
    return `Device ${device.id} has not reached the patient yet (${device.status}): there is nothing to replace; wait for its delivery.`;
  }
  return null;
}

/**
 * Why a ship_gateway_only device's gateway cannot be replaced yet, or null: its order (the
 * gateway alone) has not shipped, or is still on its way, as notWithPatient says of a whole box.
 */
function gatewayNotWithPatient(device: DeviceWithPatient): string | null {
  if (!device.shipGatewayOnly) return null;
  const waiting = [...PENDING_STATUSES, ...ON_THE_WAY_STATUSES] as readonly string[];
  if (!waiting.includes(device.status)) return null;
  return `the gateway of device ${device.id} has not reached the patient yet (${device.status}): there is no gateway to replace; wait for its delivery.`;
}

/** A replacement's new hardware that the device is on while the carrier still has it. */
interface InTheMail {
  readonly replacementId: string;
  readonly hardwareUuid: string;
  readonly status: string;
}

function stillInTheMail(device: DeviceWithPatient, what: string, mail: InTheMail): string {
  return `the replacement ${what} ${mail.hardwareUuid} of device ${device.id} (replacement ${mail.replacementId}) has not reached the patient yet (${mail.status}): there is nothing to replace; wait for its delivery.`;
}

/** A replacement not shipped yet that will replace the hardware the device is on. */
interface OnOrder {
  readonly replacementId: string;
  /** The device it was ordered for (another device on the same gateway, maybe). */
  readonly deviceId: string;
  readonly status: string;
}

/** What a replacement of the device's gateway or IMEI waits for. */
interface Waits {
  readonly inTheMail: InTheMail | null;
  readonly onOrder: OnOrder | null;
}

function alreadyOnOrder(device: DeviceWithPatient, what: string, order: OnOrder): string {
  const of = order.deviceId === device.id ? "" : ` (ordered for device ${order.deviceId})`;
  return `the ${what} ${device.hardwareUuid} of device ${device.id} is already being replaced: replacement ${order.replacementId}${of} has not shipped yet (${order.status}); a second one is a duplicate order.`;
}
