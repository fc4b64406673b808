import { isPlainObject } from "../core/field-errors.ts";
import type { Ms } from "../store/types.ts";
import type { LegacyDeliveryType } from "./activation-input.ts";

/**
 * What the lab keeps in a device's meta_data column about the fulfilment request that created
 * it (spec 4.3: "shipping fields of the fulfilment request: not shown"). The device record
 * renders it as `device.fulfillment_request` (wire-formats "Devices", null when the hardware was
 * in hand at activation) and the rest of meta_data, if any, as `device.meta_data`.
 */
export interface FulfilmentRequestMeta {
  /** Spec 2.4: a deprecated delivery type, when one was sent. */
  readonly delivery_type: LegacyDeliveryType | null;
  /** When the request was made (epoch ms). */
  readonly requested: Ms;
  /** Why it needs the client (Client Action Required), else null. */
  readonly reason: string | null;
}

const KEY = "fulfillment_request";

/** `metaData` (whatever else it holds is kept) with the fulfilment request set. */
export function withFulfilmentRequest(
  request: FulfilmentRequestMeta,
  metaData: unknown = null,
): Record<string, unknown> {
  return { ...(isPlainObject(metaData) ? metaData : {}), [KEY]: request };
}

export function fulfilmentRequestOf(metaData: unknown): FulfilmentRequestMeta | null {
  if (!isPlainObject(metaData)) return null;
  const request = metaData[KEY];
  return isPlainObject(request) ? (request as unknown as FulfilmentRequestMeta) : null;
}

/** meta_data without the lab's fulfilment request: null when nothing else is there. */
export function clientMetaOf(metaData: unknown): unknown {
  if (!isPlainObject(metaData)) return metaData ?? null;
  const { [KEY]: _request, ...rest } = metaData;
  return Object.keys(rest).length === 0 ? null : rest;
}
