import type { Catalogue } from "../catalogue/catalogue.ts";
import type { CharacteristicValue } from "../gatt/mapping.ts";
import { SIG, VENDOR } from "../gatt/uuids.ts";
import { VENDOR_RECORD_HEADER_LENGTH } from "../gatt/vendor/record.ts";
import { metricOfRecordType } from "../gatt/vendor/record-types.ts";
import { MAX_VALUES } from "../mqtt/envelope.ts";
import type { RawCharacteristicValue } from "./raw-values.ts";

/** One physical reading as the gateway relays it (an envelope reading, before JSON). */
export interface AssembledReading {
  /** 12 upper-case hex characters (spec 2.3 mac_address). */
  readonly deviceAddress: string;
  readonly sensorCode: string;
  readonly sensorId: string | null;
  /** When the first value of the reading reached the gateway (gateway time). */
  readonly receivedAt: number;
  readonly sequence: number;
  readonly values: readonly CharacteristicValue[];
  readonly clockUnset: boolean;
}

/** "f0:11:22:33:44:55" (noble) or "F01122334455" → "F01122334455". */
export function macOf(address: string): string {
  return address.replaceAll(":", "").replaceAll("-", "").toUpperCase();
}

/** The SIG characteristics whose value opens a reading (the measurement itself). */
const OPENERS = new Set<string>([
  SIG.characteristics.bloodPressureMeasurement,
  SIG.characteristics.weightMeasurement,
  SIG.characteristics.glucoseMeasurement,
  SIG.characteristics.plxSpotCheckMeasurement,
  SIG.characteristics.plxContinuousMeasurement,
]);

/** Bytes 3–7 of a Vendor Record: timestamp and UTC offset, equal across a reading's records. */
function recordStamp(value: Uint8Array): string | undefined {
  if (value.length < VENDOR_RECORD_HEADER_LENGTH) return undefined;
  return Buffer.from(value.subarray(3, 8)).toString("hex");
}

interface Open {
  readonly first: RawCharacteristicValue;
  readonly values: RawCharacteristicValue[];
}

/**
 * The gateway relays values untouched, but an envelope reading is one physical reading (the
 * values the mapping decodes together, src/gatt/mapping.ts). The boundaries are read from the
 * characteristics alone, without decoding: a SIG measurement value opens a reading and the
 * vendor Reading Context closes it (battery and glucose context values fall in between); vendor
 * records belong together while their timestamp and UTC offset stay the same, their sequence
 * numbers follow on and their metrics come in the profile's order (each once: the mapping's
 * rule), so two readings taken in the same second stay apart. A reading still open when the
 * session ends, or holding as many values as an envelope reading may, is complete.
 */
export class ReadingAssembler {
  private readonly open = new Map<string, Open>();

  constructor(
    private readonly catalogue: Catalogue,
    private readonly emit: (reading: AssembledReading) => void,
    /** The sensor code and sensor id the gateway holds for a device (its whitelist entry). */
    private readonly identify: (mac: string) => { sensorCode: string; sensorId: string | null },
  ) {}

  add(value: RawCharacteristicValue): void {
    const mac = macOf(value.deviceAddress);
    const current = this.open.get(mac);
    if (current !== undefined && !this.continues(current, value)) this.end(value.deviceAddress);
    const group = this.open.get(mac);
    if (group === undefined) this.open.set(mac, { first: value, values: [value] });
    else group.values.push(value);
    if (value.uuid === VENDOR.readingContext) this.end(value.deviceAddress);
  }

  /** The device's session ended: its open reading is complete. */
  end(deviceAddress: string): void {
    const mac = macOf(deviceAddress);
    const group = this.open.get(mac);
    if (group === undefined) return;
    this.open.delete(mac);
    const { sensorCode, sensorId } = this.identify(mac);
    this.emit({
      deviceAddress: mac,
      sensorCode,
      sensorId,
      receivedAt: group.first.receivedAt,
      sequence: group.values.find((v) => v.sequence !== undefined)?.sequence ?? 0,
      values: group.values.map((v) => ({ uuid: v.uuid, value: v.value })),
      clockUnset: group.values.some((v) => v.clockUnset),
    });
  }

  private continues(group: Open, value: RawCharacteristicValue): boolean {
    // An envelope reading holds at most MAX_VALUES: one more (a real cuff notifies Intermediate
    // Cuff Pressure, BLS 1.1 §3.2, every second while it deflates) made the whole batch off its
    // schema, and the service dead-lettered every reading in it with that one.
    if (group.values.length >= MAX_VALUES) return false;
    if (OPENERS.has(value.uuid)) return false;
    // A mapping decodes one value of each characteristic: a second (a real SIG cuff, which sends
    // no Reading Context to close its reading, notifying its battery while it lingers) made the
    // measurement before it undecodable. It starts the next reading instead.
    if (value.uuid !== VENDOR.record) return !group.values.some((v) => v.uuid === value.uuid);
    const last = group.values.at(-1)!;
    if (last.uuid !== VENDOR.record) return false;
    const stamp = recordStamp(value.value);
    return (
      stamp !== undefined &&
      stamp === recordStamp(last.value) &&
      value.sequence !== undefined &&
      last.sequence !== undefined &&
      value.sequence === ((last.sequence + 1) & 0xffff) &&
      this.rank(value) > this.rank(last)
    );
  }

  /** The place of a Vendor Record's metric in its profile's metric list (-1: unknown). */
  private rank(value: RawCharacteristicValue): number {
    const metric = metricOfRecordType(value.value[VENDOR_RECORD_HEADER_LENGTH - 1] ?? -1);
    const code = value.sensorCode;
    if (metric === undefined || code === undefined) return -1;
    const profile = this.catalogue.withSensorCode(code).find((p) => p.connectivity === "gateway");
    return profile?.metrics.findIndex((m) => m.name === metric) ?? -1;
  }
}
