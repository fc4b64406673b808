import { RpmlabError } from "../core/errors.ts";
import type { Store } from "../store/store.ts";
import type {
  DeviceFilter,
  DeviceWithPatient,
  ListOptions,
  ListResult,
  Ms,
} from "../store/types.ts";
import type { LegacyDeliveryType } from "./activation-input.ts";
import { clientMetaOf, fulfilmentRequestOf } from "./device-meta.ts";
import { innerDeviceId, isUuid } from "./identifiers.ts";
import { SHIPPED_FILTER } from "./statuses.ts";

/** wire-formats "Devices": the nested patient of a device record, exactly the sample's keys. */
export interface DevicePatientView {
  readonly external_id: string;
  readonly name: string | null;
  readonly phone_number: string | null;
  readonly email: string | null;
  readonly physician: string | null;
  readonly clinic_name: string | null;
  readonly care_manager: string | null;
  readonly sms_opt_in: boolean;
}

/** rpmlab's shape for a fulfilment request (spec: not shown); null when hardware was in hand. */
export interface FulfilmentRequestView {
  readonly delivery_type: LegacyDeliveryType | null;
  readonly require_signature: boolean;
  readonly ship_gateway_only: boolean;
  /** Epoch ms. */
  readonly created: Ms;
  readonly reason: string | null;
}

/**
 * GET hwi-devices/{id}/: the wire-formats sample's keys, plus the device fields spec 2.4 lists
 * (hwi_device_id, hardware_uuid, sensor_id, properties, require_signature, ship_gateway_only).
 * Times are epoch ms (`device.created`, `device.fulfillment_request.created`); the API renders
 * them as ISO 8601.
 */
export interface DeviceRecord {
  readonly id: string;
  readonly hwi_device_id: string;
  readonly device: {
    readonly id: string;
    readonly name: string;
    readonly sensor_code: string | null;
    readonly hardware_uuid: string | null;
    readonly created: Ms;
    readonly fulfillment_request: FulfilmentRequestView | null;
    readonly meta_data: unknown;
    /** Another device of the account is on the same gateway. */
    readonly shared_hardware_uuid: boolean;
  };
  readonly patient: DevicePatientView | null;
  readonly patient_id: string | null;
  readonly patient_phone_number: string | null;
  readonly status: string;
  readonly hardware_uuid: string | null;
  readonly sensor_id: string | null;
  readonly properties: ReadonlyArray<{ readonly key: string; readonly value: string }>;
  readonly require_signature: boolean;
  readonly ship_gateway_only: boolean;
}

/** A query string value as Fastify parses it: repeated keys give an array. */
export type QueryValue = string | readonly string[] | undefined;

/**
 * The hwi-devices list filters (spec 4.3; wire-formats "Devices"), as django-filter reads them:
 * a repeated key takes its last value, an empty value means no filter, unknown keys are ignored.
 * status=shipped (any case) selects Dropshipped, In Transit and Out for Delivery, not Available
 * for Pickup (spec 3, 6.2); any other status value matches exactly.
 */
export function deviceFilterOf(query: Readonly<Record<string, QueryValue>>): DeviceFilter {
  const value = (key: string): string | undefined => {
    const raw = query[key];
    const last = typeof raw === "string" ? raw : raw?.[raw.length - 1];
    return last === undefined || last === "" ? undefined : last;
  };
  const status = value("status");
  const filter: Record<string, unknown> = {
    propertyKey: value("properties__key"),
    propertyValue: propertyValues(value("properties__value")),
    status: status?.toLowerCase() === "shipped" ? SHIPPED_FILTER : status,
    patientExternalId: value("patient__external_id"),
    hardwareUuid: value("device__hardware_uuid"),
    hardwareUuidIexact: value("device__hardware_uuid__iexact"),
    search: value("search"),
  };
  for (const key of Object.keys(filter)) if (filter[key] === undefined) delete filter[key];
  return filter as DeviceFilter;
}

/**
 * properties__value: the value as sent, and for a UUID also as webhook keys store it (trimmed,
 * lower case: device-properties.ts), so a device routed to a webhook is found by the id it was
 * set with, in any case. Free-text properties keep their values as sent and match exactly.
 */
function propertyValues(sent: string | undefined): string | readonly string[] | undefined {
  if (sent === undefined || !isUuid(sent)) return sent;
  const stored = sent.trim().toLowerCase();
  return stored === sent ? sent : [sent, stored];
}

/** Device records for GET hwi-devices/ and hwi-devices/{id}/. */
export class DeviceViews {
  constructor(private readonly deps: { readonly store: Store }) {}

  async get(accountId: string, id: string): Promise<DeviceRecord> {
    const device = await this.deps.store.devices.get(accountId, id);
    if (device === null) {
      throw new RpmlabError("E_STORE_NOT_FOUND", `device ${id} not found`, { id });
    }
    return this.render(device);
  }

  async list(
    accountId: string,
    query: Readonly<Record<string, QueryValue>>,
    page?: ListOptions,
  ): Promise<ListResult<DeviceRecord>> {
    const result = await this.deps.store.devices.list(accountId, deviceFilterOf(query), page);
    const shared = new Map<string, boolean>();
    const rows: DeviceRecord[] = [];
    for (const device of result.rows) rows.push(await this.render(device, shared));
    return result.total === undefined ? { rows } : { rows, total: result.total };
  }

  /** `shared` caches shared_hardware_uuid per gateway across one list page. */
  async render(
    device: DeviceWithPatient,
    shared: Map<string, boolean> = new Map(),
  ): Promise<DeviceRecord> {
    const { store } = this.deps;
    const properties = await store.deviceProperties.list(device.id);
    const request = fulfilmentRequestOf(device.metaData);
    const p = device.patient;
    return {
      id: device.id,
      hwi_device_id: device.id,
      device: {
        id: innerDeviceId(device.id),
        name: device.name,
        sensor_code: device.sensorCode,
        hardware_uuid: device.hardwareUuid,
        created: device.created,
        fulfillment_request:
          request === null
            ? null
            : {
                delivery_type: request.delivery_type,
                require_signature: device.requireSignature,
                ship_gateway_only: device.shipGatewayOnly,
                created: request.requested,
                reason: request.reason,
              },
        meta_data: clientMetaOf(device.metaData),
        shared_hardware_uuid: await this.isShared(device, shared),
      },
      patient:
        p === null
          ? null
          : {
              external_id: p.externalId,
              name: p.name,
              phone_number: p.phoneNumber,
              email: p.email,
              physician: p.physician,
              clinic_name: p.clinicName,
              care_manager: p.careManager,
              sms_opt_in: p.smsOptIn,
            },
      patient_id: p?.externalId ?? null,
      patient_phone_number: p?.phoneNumber ?? null,
      status: device.status,
      hardware_uuid: device.hardwareUuid,
      sensor_id: device.sensorId,
      properties: properties.map((r) => ({ key: r.key, value: r.value })),
      require_signature: device.requireSignature,
      ship_gateway_only: device.shipGatewayOnly,
    };
  }

  private async isShared(device: DeviceWithPatient, cache: Map<string, boolean>) {
    const uuid = device.hardwareUuid?.toUpperCase();
    if (uuid === undefined) return false;
    const known = cache.get(uuid);
    if (known !== undefined) return known;
    const { rows } = await this.deps.store.devices.list(
      device.accountId,
      { hardwareUuidIexact: uuid },
      { limit: 2 },
    );
    const shared = rows.length > 1;
    cache.set(uuid, shared);
    return shared;
  }
}
