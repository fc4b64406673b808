import type { Catalogue } from "../catalogue/catalogue.ts";
import type { Profile } from "../catalogue/schema.ts";
import { MESSAGES, notADictionaryBody } from "../core/drf-fields.ts";
import { readBool, readText } from "../core/drf-read.ts";
import { FieldErrorCollector, isPlainObject } from "../core/field-errors.ts";
import { normalizeGatewayUuid, normalizeImei } from "./identifiers.ts";

/** Spec 2.4: the deprecated legacy delivery types, still accepted. */
export const LEGACY_DELIVERY_TYPES = ["Priority", "Shipping"] as const;
export type LegacyDeliveryType = (typeof LEGACY_DELIVERY_TYPES)[number];

/** A POST hwi-devices body once every field rule of spec 2.4 / 2.8 has passed. */
export interface ActivationInput {
  /** The device type; a legacy name has already been mapped to its current one (spec 2.4). */
  readonly profile: Profile;
  /** Canonical gateway id or IMEI; null asks the lab to ship the hardware. */
  readonly hardwareUuid: string | null;
  readonly sensorId: string | null;
  /** Null: no patient (one can be attached later with PUT, spec 4.3). */
  readonly patientExternalId: string | null;
  readonly requireSignature: boolean;
  readonly shipGatewayOnly: boolean;
  readonly deliveryType: LegacyDeliveryType | null;
}

/**
 * Reads a POST hwi-devices body (spec 2.4, 4.3). Every problem is reported at once, keyed by
 * field as DRF does; the rules that need the store (gateway slots, gateway owner) come later.
 * Unknown keys are ignored, as DRF ignores them.
 */
export function parseActivation(catalogue: Catalogue, body: unknown): ActivationInput {
  const errors = new FieldErrorCollector();
  if (!isPlainObject(body)) {
    errors.add("non_field_errors", notADictionaryBody(body));
    errors.throwIfAny();
  }
  const input = body as Record<string, unknown>;
  const profile = readDevice(errors, catalogue, input.device);
  const hardwareUuid = profile === undefined ? undefined : readHardware(errors, profile, input);
  const sensorId = readSensorId(errors, catalogue, profile, input.sensor_id);
  const patientExternalId = readPatient(errors, input.patient);
  const requireSignature = readBool(errors, ["require_signature"], input.require_signature);
  const shipGatewayOnly = readBool(errors, ["ship_gateway_only"], input.ship_gateway_only);
  const deliveryType = readDeliveryType(errors, input.delivery_type);
  if (shipGatewayOnly === true && profile !== undefined) {
    if (profile.connectivity === "cellular") {
      errors.add(
        "ship_gateway_only",
        `${profile.name} is a direct-cellular device: it has no gateway to ship (spec 2.8).`,
      );
    } else if (hardwareUuid) {
      errors.add(
        "ship_gateway_only",
        "ship_gateway_only asks the lab to ship a gateway; it cannot be combined with a device.hardware_uuid (hardware already in hand).",
      );
    }
  }
  errors.throwIfAny();
  return {
    profile: profile!,
    hardwareUuid: hardwareUuid ?? null,
    sensorId: sensorId ?? null,
    patientExternalId: patientExternalId ?? null,
    requireSignature: requireSignature ?? false,
    shipGatewayOnly: shipGatewayOnly ?? false,
    deliveryType: deliveryType ?? null,
  };
}

function readDevice(
  errors: FieldErrorCollector,
  catalogue: Catalogue,
  device: unknown,
): Profile | undefined {
  if (device === undefined || device === null) {
    errors.add("device", device === null ? MESSAGES.null : MESSAGES.required);
    return undefined;
  }
  if (!isPlainObject(device)) {
    errors.add(["device", "non_field_errors"], MESSAGES.dictionary(device));
    return undefined;
  }
  const name = readText(errors, ["device", "name"], device.name, { required: true });
  if (typeof name !== "string") return undefined;
  const profile = catalogue.find(name);
  if (profile === undefined) {
    errors.add(["device", "name"], unknownNameMessage(catalogue, name));
  }
  return profile;
}

/** Spec 2.4: names as hwi-device-types lists them; legacy names are accepted too. */
function unknownNameMessage(catalogue: Catalogue, name: string): string {
  const names = catalogue.profiles.map((p) => p.name).join(", ");
  const legacy = catalogue.profiles.flatMap((p) => p.legacy_names.map((l) => `${l} → ${p.name}`));
  const legacyText = legacy.length === 0 ? "" : ` Legacy names accepted: ${legacy.join(", ")}.`;
  return `"${name}" is not a valid device name. Valid names: ${names}.${legacyText}`;
}

/** Spec 2.4 device.hardware_uuid: a gateway id for gateway devices, an IMEI for cellular ones. */
function readHardware(
  errors: FieldErrorCollector,
  profile: Profile,
  input: Record<string, unknown>,
): string | null | undefined {
  const device = input.device as Record<string, unknown>;
  const path = ["device", "hardware_uuid"];
  const raw = readText(errors, path, device.hardware_uuid, { allowNull: true, allowBlank: true });
  if (raw === undefined || raw === null) return raw;
  if (profile.identity === "imei") {
    const imei = normalizeImei(raw);
    if (imei === null) {
      errors.add(
        path,
        `"${raw}" is not an IMEI: ${profile.name} is a direct-cellular device, identified by its 15-digit IMEI.`,
      );
    }
    return imei ?? undefined;
  }
  const gateway = normalizeGatewayUuid(raw);
  if (gateway === null) {
    errors.add(
      path,
      `"${raw}" is not a gateway id: 12 hexadecimal characters (hyphens are ignored), e.g. 297056120BD7.`,
    );
  }
  return gateway ?? undefined;
}

/**
 * Spec 2.4 / 2.8: required by types told apart by sensor id on a gateway (inhaler: its serial
 * number), refused by every other type, so a sensor id can never put a second device of another
 * type into a gateway slot (the store's slot is sensor code + sensor id).
 */
function readSensorId(
  errors: FieldErrorCollector,
  catalogue: Catalogue,
  profile: Profile | undefined,
  value: unknown,
): string | null | undefined {
  const read = readText(errors, ["sensor_id"], value, { allowNull: true, allowBlank: true });
  // Absent, null and blank all mean "no sensor id"; undefined after a value: the value was bad.
  const sensorId = value === undefined ? null : read;
  if (profile === undefined || sensorId === undefined) return undefined;
  const rule = profile.sensor_id;
  const meaning = rule.meaning === undefined ? "" : ` (the ${rule.meaning})`;
  if (profile.per_gateway === "many_by_sensor_id") {
    if (sensorId === null) {
      errors.add("sensor_id", `This field is required for ${profile.name}${meaning}.`);
      return undefined;
    }
    if (rule.pattern !== undefined && !new RegExp(rule.pattern).test(sensorId)) {
      errors.add(
        "sensor_id",
        `"${sensorId}" is not a valid sensor id for ${profile.name}${meaning}: it must match ${rule.pattern}.`,
      );
      return undefined;
    }
    return sensorId;
  }
  if (sensorId === null) return null;
  if (profile.connectivity === "cellular") {
    errors.add(
      "sensor_id",
      `${profile.name} is a direct-cellular device: direct-cellular devices have no sensor ids (spec 2.8).`,
    );
  } else {
    const withIds = catalogue.profiles
      .filter((p) => p.per_gateway === "many_by_sensor_id")
      .map((p) => p.name);
    errors.add(
      "sensor_id",
      `${profile.name} takes no sensor_id: only types with several devices per gateway told apart by sensor id (${withIds.join(", ")}) have one.`,
    );
  }
  return undefined;
}

/**
 * Spec 2.1 / 2.4: the nested patient is found or created by external_id. A record created this
 * way holds only the external_id until it is updated, so the other nested fields are ignored.
 */
function readPatient(errors: FieldErrorCollector, patient: unknown): string | null | undefined {
  if (patient === undefined || patient === null) return null;
  if (!isPlainObject(patient)) {
    errors.add(["patient", "non_field_errors"], MESSAGES.dictionary(patient));
    return undefined;
  }
  const externalId = readText(errors, ["patient", "external_id"], patient.external_id, {
    required: true,
  });
  return typeof externalId === "string" ? externalId : undefined;
}

function readDeliveryType(
  errors: FieldErrorCollector,
  value: unknown,
): LegacyDeliveryType | null | undefined {
  const text = readText(errors, ["delivery_type"], value, { allowNull: true, allowBlank: true });
  if (text === undefined || text === null) return text;
  if ((LEGACY_DELIVERY_TYPES as readonly string[]).includes(text)) {
    return text as LegacyDeliveryType;
  }
  errors.add(
    "delivery_type",
    `${MESSAGES.choice(text)} The only delivery types are the deprecated Priority and Shipping (spec 2.4); set require_signature for proof of delivery.`,
  );
  return undefined;
}
