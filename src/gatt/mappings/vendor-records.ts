import type { Profile } from "../../catalogue/schema.ts";
import type { MetricRecord, PhysicalReading } from "../../readings/types.ts";
import type { CharacteristicValue, ReadingMapping } from "../mapping.ts";
import { canonicalUuid, VENDOR } from "../uuids.ts";
import { decodeVendorRecord, encodeVendorRecord } from "../vendor/record.ts";
import { compile } from "./compiled.ts";
import { checkTimezone, mappingError } from "./shared.ts";

/**
 * Mappings onto the vendor records service (vendor/record.ts): one Vendor Record value per metric
 * record of the reading, in the profile's metric order, all with the reading's timestamp and UTC
 * offset; the n-th gets sequence number `sequence + n` (mod 65536). The record layout is driven by
 * the profile (record type per metric, values at the profile's step, filter params in the
 * profile's order), so one implementation serves every device type without a SIG profile:
 * peak_flow, fetal_doppler, inhaler, medication_cap, proximity_band, and
 * pulse_oximeter_summary (the cellular pulse oximeter, whose value 2 is a standard deviation).
 */
function vendorRecordsMapping(name: string): ReadingMapping {
  const what = `${name} mapping`;

  function encode(reading: PhysicalReading, profile: Profile, sequence = 0): CharacteristicValue[] {
    const c = compile(profile);
    checkTimezone(reading.timezone_offset, what);
    const values: CharacteristicValue[] = [];
    let last = -1;
    for (const record of reading.records) {
      // Profile order, each metric once, so decode gives the records back as they were.
      const index = c.byName.get(record.metric)?.index ?? -1;
      if (index <= last) {
        throw mappingError(
          what,
          "records",
          `${record.metric} is unknown, repeated or out of the profile's metric order`,
        );
      }
      last = index;
      const value = encodeVendorRecord(
        {
          sequenceNumber: (sequence + values.length) & 0xffff,
          timestamp: reading.timestamp,
          timezoneOffset: reading.timezone_offset,
          record,
        },
        profile,
      );
      values.push({ uuid: VENDOR.record, value });
    }
    if (values.length === 0)
      throw mappingError(what, "records", "a reading needs at least one record");
    return values;
  }

  function decode(values: readonly CharacteristicValue[], profile: Profile): PhysicalReading {
    if (values.length === 0) throw mappingError(what, "uuid", "no Vendor Record values");
    const c = compile(profile);
    const slots: Array<MetricRecord | undefined> = [];
    for (let i = 0; i < c.metrics.length; i++) slots.push(undefined);
    let timestamp = 0;
    let timezone = 0;
    for (let i = 0; i < values.length; i++) {
      const v = values[i]!;
      if (v.uuid !== VENDOR.record && canonicalUuid(v.uuid) !== VENDOR.record) {
        throw mappingError(what, "uuid", `${v.uuid} is not the Vendor Record characteristic`);
      }
      const decoded = decodeVendorRecord(v.value, profile);
      if (i === 0) {
        timestamp = decoded.timestamp;
        timezone = decoded.timezoneOffset;
      } else if (decoded.timestamp !== timestamp || decoded.timezoneOffset !== timezone) {
        throw mappingError(
          what,
          "timestamp",
          "the records of one reading have different timestamps or UTC offsets",
        );
      }
      const slot = c.byName.get(decoded.record.metric)!.index;
      if (slots[slot] !== undefined)
        throw mappingError(what, "records", `two ${decoded.record.metric} records`);
      slots[slot] = decoded.record;
    }
    const records: MetricRecord[] = [];
    for (const record of slots) if (record !== undefined) records.push(record);
    return { timestamp, timezone_offset: timezone, records };
  }

  return { name, encode, decode };
}

export const VENDOR_RECORD_MAPPINGS: readonly ReadingMapping[] = [
  "peak_flow",
  "fetal_doppler",
  "inhaler",
  "medication_cap",
  "proximity_band",
  "pulse_oximeter_summary",
].map(vendorRecordsMapping);
