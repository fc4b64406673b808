import type { PhysicalReading } from "./types.ts";

/** A reading as a generator emits it: which device sent it, and whether it is a re-send. */
export interface GeneratedReading extends PhysicalReading {
  /** Profile name of the device, e.g. "Vendor BPM - Wide Range". */
  readonly device: string;
  /** True for a re-emission: timestamp, records and index repeat an earlier reading exactly. */
  readonly duplicate: boolean;
}
