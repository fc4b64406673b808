import type { ReadingCounts } from "../observed.ts";
import type { Fleet } from "./fleet.ts";
import type { LabClient } from "./lab-client.ts";
import type { KeyedRecord } from "./ledger.ts";
import { heldAtEnd } from "./unit-readings.ts";

/** Missing or unexpected records the report names, to say what went wrong. */
const MISMATCHES = 10;

export interface ReadingTally {
  readonly readings: ReadingCounts;
  /** Every stored record of the fleet's devices, as the digest takes them. */
  readonly measurements: readonly Record<string, unknown>[];
  /** The first few records the ledgers missed or did not expect, device by device. */
  readonly mismatches: readonly string[];
}

/**
 * The report's readings counters (issue 7 §2): each device's ledger of what it took, against
 * what the API holds for it at the end of the run.
 */
export async function countReadings(fleet: Fleet, client: LabClient): Promise<ReadingTally> {
  // Before the fleet stops: what its devices and gateways still hold is not missing.
  heldAtEnd(fleet.patients);
  const readings: Record<keyof ReadingCounts, number> = {
    taken: 0,
    stored: 0,
    lost_by_design: 0,
    returned_with_unit: 0,
    held_at_end: 0,
    dropped_full: 0,
    missing: 0,
    duplicates_stored: 0,
    duplicates_suppressed: 0,
  };
  const measurements: Record<string, unknown>[] = [];
  const mismatches: string[] = [];
  for (const patient of fleet.patients) {
    for (const device of patient.devices) {
      const records = await client.all<KeyedRecord & Record<string, unknown>>(
        patient.domain,
        `/hwi/hwi-devices/${device.hwiDeviceId}/measurements/`,
      );
      const c = await device.ledger.count(records);
      for (const m of c.mismatches) {
        if (mismatches.length < MISMATCHES)
          mismatches.push(`${patient.externalId} ${device.profile.name}: ${m}`);
      }
      readings.taken += c.taken;
      readings.stored += c.stored;
      readings.lost_by_design += c.lostByDesign;
      readings.returned_with_unit += c.returnedWithUnit;
      readings.held_at_end += c.heldAtEnd;
      readings.dropped_full += c.droppedFull;
      readings.missing += c.missing;
      readings.duplicates_stored += c.duplicatesStored;
      readings.duplicates_suppressed += Math.max(0, c.resends - c.duplicatesStored);
      // Ingestion's bookkeeping (row id, when it was stored) depends on arrival order, not on
      // the seed: left out of the digest.
      for (const { id: _id, created: _created, ...record } of records) measurements.push(record);
    }
  }
  return { readings, measurements, mismatches };
}
