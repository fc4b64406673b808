import { parseIso, toIsoMicros } from "../core/time.ts";
import type { CharacteristicValue } from "../gatt/mapping.ts";
import { canonicalUuid } from "../gatt/uuids.ts";
import {
  type CellularUplink,
  ENVELOPE_VERSION,
  type GatewayUplink,
  type CharacteristicValuePayload as ValuePayload,
} from "./envelope.ts";

/**
 * The uplink envelope in the lab's own terms, both ways: epoch ms instead of ISO text, bytes
 * instead of base64, UUIDs as src/gatt spells them. Senders (simulated gateways, cellular
 * devices, tests) build payloads with `gatewayUplink` / `cellularUplink`; the ingestion core
 * reads them with `toUplink`.
 */
export interface UplinkReading {
  /** Bluetooth address (gateway readings); null for a direct-cellular device. */
  readonly deviceAddress: string | null;
  /** Null for a direct-cellular device (spec 2.8: no sensor code). */
  readonly sensorCode: string | null;
  readonly sensorId: string | null;
  /** The device's clock was unset when it took the reading (gateway readings only). */
  readonly clockUnset: boolean;
  readonly receivedAt: number;
  readonly sequence: number;
  readonly values: readonly CharacteristicValue[];
}

export type UplinkSource =
  | { readonly kind: "gateway"; readonly gatewayUuid: string }
  | { readonly kind: "cellular"; readonly imei: string; readonly deviceType: string };

export interface Uplink {
  readonly source: UplinkSource;
  readonly messageId: string;
  readonly sentAt: number;
  readonly readings: readonly UplinkReading[];
}

/** Times in a parsed payload passed the schema's calendar check. */
const ms = (iso: string): number => parseIso(iso)!;

function toValues(values: readonly ValuePayload[]): CharacteristicValue[] {
  return values.map((v) => {
    const bytes = Buffer.from(v.value_b64, "base64");
    return {
      uuid: canonicalUuid(v.uuid),
      value: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    };
  });
}

function fromValues(values: readonly CharacteristicValue[]): ValuePayload[] {
  return values.map((v) => ({
    uuid: v.uuid,
    value_b64: Buffer.from(v.value.buffer, v.value.byteOffset, v.value.byteLength).toString(
      "base64",
    ),
  }));
}

/** A schema-checked payload of `gw/up` or `cell/up` in the lab's terms. */
export function toUplink(payload: GatewayUplink | CellularUplink): Uplink {
  if ("gateway_uuid" in payload) {
    return {
      source: { kind: "gateway", gatewayUuid: payload.gateway_uuid },
      messageId: payload.message_id,
      sentAt: ms(payload.sent_at),
      readings: payload.readings.map((r) => ({
        deviceAddress: r.device_address,
        sensorCode: r.sensor_code,
        sensorId: r.sensor_id ?? null,
        clockUnset: r.clock_unset === true,
        receivedAt: ms(r.received_at),
        sequence: r.sequence,
        values: toValues(r.values),
      })),
    };
  }
  return {
    source: { kind: "cellular", imei: payload.imei, deviceType: payload.device_type },
    messageId: payload.message_id,
    sentAt: ms(payload.sent_at),
    readings: payload.readings.map((r) => ({
      deviceAddress: null,
      sensorCode: null,
      sensorId: null,
      clockUnset: false,
      receivedAt: ms(r.received_at),
      sequence: r.sequence,
      values: toValues(r.values),
    })),
  };
}

export interface OutgoingReading {
  readonly deviceAddress: string;
  readonly sensorCode: string;
  readonly sensorId?: string | null;
  /** The device's clock was unset when it took the reading (envelope `clock_unset`). */
  readonly clockUnset?: boolean;
  readonly receivedAt: number;
  readonly sequence: number;
  readonly values: readonly CharacteristicValue[];
}

/** The `gw/up` payload a gateway publishes. */
export function gatewayUplink(input: {
  readonly messageId: string;
  readonly gatewayUuid: string;
  readonly sentAt: number;
  readonly readings: readonly OutgoingReading[];
}): GatewayUplink {
  return {
    v: ENVELOPE_VERSION,
    message_id: input.messageId,
    gateway_uuid: input.gatewayUuid,
    sent_at: toIsoMicros(input.sentAt),
    readings: input.readings.map((r) => ({
      device_address: r.deviceAddress,
      sensor_code: r.sensorCode,
      ...(r.sensorId === undefined || r.sensorId === null ? {} : { sensor_id: r.sensorId }),
      ...(r.clockUnset === true ? { clock_unset: true as const } : {}),
      received_at: toIsoMicros(r.receivedAt),
      sequence: r.sequence,
      values: fromValues(r.values),
    })),
  };
}

/** The `cell/up` payload a direct-cellular device publishes. */
export function cellularUplink(input: {
  readonly messageId: string;
  readonly imei: string;
  readonly deviceType: string;
  readonly sentAt: number;
  readonly readings: readonly Omit<
    OutgoingReading,
    "deviceAddress" | "sensorCode" | "sensorId" | "clockUnset"
  >[];
}): CellularUplink {
  return {
    v: ENVELOPE_VERSION,
    message_id: input.messageId,
    imei: input.imei,
    device_type: input.deviceType,
    sent_at: toIsoMicros(input.sentAt),
    readings: input.readings.map((r) => ({
      received_at: toIsoMicros(r.receivedAt),
      sequence: r.sequence,
      values: fromValues(r.values),
    })),
  };
}
