import type { CharacteristicValue } from "../gatt/mapping.ts";
import type { OutgoingReading } from "../mqtt/uplink.ts";

/**
 * A reading as an outbox holds it: JSON-safe (bytes as base64), so the disk outbox can store it
 * and give it back unchanged. Gateway readings carry the device's address and sensor code
 * (spec 2.3); a direct-cellular device's carry neither (spec 2.8).
 */
export interface StoredReading {
  readonly deviceAddress?: string;
  readonly sensorCode?: string;
  readonly sensorId?: string;
  readonly receivedAt: number;
  readonly sequence: number;
  readonly values: readonly { readonly uuid: string; readonly b64: string }[];
}

type AnyReading = Omit<OutgoingReading, "deviceAddress" | "sensorCode"> &
  Partial<Pick<OutgoingReading, "deviceAddress" | "sensorCode">>;

/** The JSON-safe form of a reading a gateway relays or a cellular device takes. */
export function toStoredReading(reading: AnyReading): StoredReading {
  return {
    ...(reading.deviceAddress === undefined ? {} : { deviceAddress: reading.deviceAddress }),
    ...(reading.sensorCode === undefined ? {} : { sensorCode: reading.sensorCode }),
    ...(reading.sensorId === undefined || reading.sensorId === null
      ? {}
      : { sensorId: reading.sensorId }),
    receivedAt: reading.receivedAt,
    sequence: reading.sequence,
    values: reading.values.map((v) => ({
      uuid: v.uuid,
      b64: Buffer.from(v.value.buffer, v.value.byteOffset, v.value.byteLength).toString("base64"),
    })),
  };
}

/** The characteristic values of a stored reading, as bytes again. */
export function storedValues(reading: StoredReading): CharacteristicValue[] {
  return reading.values.map((v) => {
    const bytes = Buffer.from(v.b64, "base64");
    return {
      uuid: v.uuid,
      value: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    };
  });
}

/**
 * The first field of `item` that a StoredReading (or a gateway's queued reading) could not hold,
 * or undefined when it is one: what the disk outbox checks an entry read back against.
 */
export function storedReadingFault(item: unknown): string | undefined {
  if (typeof item !== "object" || item === null) return "(whole item)";
  const r = item as Record<string, unknown>;
  for (const key of ["deviceAddress", "sensorCode", "sensorId"] as const) {
    if (r[key] !== undefined && typeof r[key] !== "string") return key;
  }
  if (!Number.isFinite(r.receivedAt)) return "receivedAt";
  if (!Number.isInteger(r.sequence)) return "sequence";
  if (!Array.isArray(r.values)) return "values";
  const at = r.values.findIndex(
    (v: unknown) =>
      typeof v !== "object" ||
      v === null ||
      typeof (v as { uuid?: unknown }).uuid !== "string" ||
      typeof (v as { b64?: unknown }).b64 !== "string",
  );
  return at === -1 ? undefined : `values[${at}]`;
}
