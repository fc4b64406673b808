import type { Catalogue } from "../catalogue/catalogue.ts";
import { notADictionaryBody } from "../core/drf-fields.ts";
import { readText } from "../core/drf-read.ts";
import { RpmlabError } from "../core/errors.ts";
import { FieldErrorCollector, fieldError, isPlainObject } from "../core/field-errors.ts";
import type { Store } from "../store/store.ts";
import type { DeviceWithPatient } from "../store/types.ts";
import { isUuid } from "./identifiers.ts";

export interface DeviceProperty {
  readonly key: string;
  readonly value: string;
}

/** Spec 2.8: every device type accepts it, whatever its profile lists. */
export const MEASUREMENT_WEBHOOK_ID = "measurement_webhook_id";

/**
 * hwi-devices/{id}/properties/ (spec 2.4 `properties`, a key/value list). Keys are free text;
 * keys of kind webhook_id (measurement_webhook_id on every type, spec 2.8) must name one of the
 * account's MEASUREMENT webhooks by its UUID, or be "" — spec 6.3.2: the empty string restores
 * sending to all webhooks, so it is stored as "" rather than deleted, and the router treats ""
 * as unset. A set on an existing key replaces its value.
 */
export class DeviceProperties {
  constructor(private readonly deps: { readonly store: Store; readonly catalogue: Catalogue }) {}

  async list(accountId: string, deviceId: string): Promise<DeviceProperty[]> {
    await this.device(accountId, deviceId);
    const rows = await this.deps.store.deviceProperties.list(deviceId);
    return rows.map((r) => ({ key: r.key, value: r.value }));
  }

  /** Body `{"key": …, "value": …}`; returns the stored pair. */
  async set(accountId: string, deviceId: string, body: unknown): Promise<DeviceProperty> {
    const device = await this.device(accountId, deviceId);
    const errors = new FieldErrorCollector();
    if (!isPlainObject(body)) {
      errors.add("non_field_errors", notADictionaryBody(body));
      errors.throwIfAny();
    }
    const input = body as Record<string, unknown>;
    const key = readText(errors, ["key"], input.key, { required: true, maxLength: 100 });
    const raw = readText(errors, ["value"], input.value, { required: true, allowBlank: true });
    errors.throwIfAny();
    const value = await this.checkValue(device, key as string, raw as string);
    const row = await this.deps.store.deviceProperties.set(deviceId, key as string, value);
    return { key: row.key, value: row.value };
  }

  /** Not found when the device or the key is absent. */
  async delete(accountId: string, deviceId: string, key: string): Promise<void> {
    await this.device(accountId, deviceId);
    if (!(await this.deps.store.deviceProperties.delete(deviceId, key))) {
      throw new RpmlabError("E_STORE_NOT_FOUND", `device ${deviceId} has no property "${key}"`, {
        id: deviceId,
        key,
      });
    }
  }

  private async device(accountId: string, deviceId: string): Promise<DeviceWithPatient> {
    const device = await this.deps.store.devices.get(accountId, deviceId);
    if (device === null) {
      throw new RpmlabError("E_STORE_NOT_FOUND", `device ${deviceId} not found`, { id: deviceId });
    }
    return device;
  }

  private isWebhookKey(device: DeviceWithPatient, key: string): boolean {
    if (key === MEASUREMENT_WEBHOOK_ID) return true;
    const profile = this.deps.catalogue.find(device.name);
    return (
      profile?.device_properties.some((p) => p.key === key && p.kind === "webhook_id") ?? false
    );
  }

  /** Spec 6.3.2: a webhook key names a MEASUREMENT webhook of this account, or is "". */
  private async checkValue(device: DeviceWithPatient, key: string, value: string) {
    if (!this.isWebhookKey(device, key) || value === "") return value;
    if (!isUuid(value)) {
      throw fieldError(
        "value",
        `Must be a valid UUID: ${key} names one of the account's measurement webhooks, or is "" to send to all webhooks (spec 6.3.2).`,
      );
    }
    const id = value.trim().toLowerCase();
    const webhook = await this.deps.store.webhooks.get(device.accountId, id);
    if (webhook === null) {
      throw fieldError("value", `No webhook with id ${id} in this account (spec 6.3.2).`);
    }
    if (webhook.event !== "MEASUREMENT") {
      throw fieldError(
        "value",
        `Webhook ${id} is a ${webhook.event} webhook; ${key} must name a MEASUREMENT webhook.`,
      );
    }
    return id;
  }
}
