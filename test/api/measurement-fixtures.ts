import type { LightMyRequestResponse } from "fastify";
import { afterEach, beforeEach } from "vitest";
import type { ApiConfig } from "../../src/api/types.ts";
import type { NewMeasurement } from "../../src/store/types-ingest.ts";
import { hwi, type Lab, makeLab, send } from "./helpers.ts";
import { activate, BPM, GW, hwiCall, knownGateway, ok, reading } from "./hwi-fixtures.ts";

export type Record = { id: number; metric: string; timestamp: string; created: string } & {
  [key: string]: unknown;
};

/**
 * A lab with patient P-1 on two devices of one known gateway (a BPM and a scale), fresh for
 * each test, and the four measurement endpoints of spec 4.4 over them.
 */
export class MeasurementLab {
  lab!: Lab;
  bpm = "";
  scale = "";

  async open(config: Partial<ApiConfig> = {}): Promise<void> {
    this.lab = await makeLab({ config });
    await knownGateway(this.lab);
    const patient = { external_id: "P-1" };
    this.bpm = (await activate(this.lab, { device: { name: BPM, hardware_uuid: GW }, patient })).id;
    this.scale = (
      await activate(this.lab, { device: { name: "Vendor Scale", hardware_uuid: GW }, patient })
    ).id;
  }

  /** A JSON call on the dev account's hwi paths. */
  get call() {
    return hwiCall(this.lab);
  }

  insert(rows: NewMeasurement[]) {
    return this.lab.store.measurements.insertMany(rows);
  }

  /** A BPM reading taken at `ms`, received 30 s later. */
  at(ms: number, over: Partial<NewMeasurement> = {}): NewMeasurement {
    return reading(this.lab.dev, this.bpm, { timestamp: ms, created: ms + 30_000, ...over });
  }

  /** The four endpoints over the BPM (device ones) or patient P-1 (patient ones), with `query`. */
  endpoints(query: string) {
    return {
      device: hwi(this.lab.dev, `hwi-devices/${this.bpm}/measurements/?${query}`),
      patient: hwi(this.lab.dev, `patients/P-1/measurements/?${query}`),
      v2Device: `/api/v2/hwi/device-measurements/?hwi_device_id=${this.bpm}&${query}`,
      v2Patient: `/api/v2/hwi/patient-measurements/?patient_id=P-1&${query}`,
    };
  }

  get(url: string): Promise<LightMyRequestResponse> {
    return send(this.lab.app, "GET", url, this.lab.dev.key);
  }

  /** The timestamps (to the minute) a flat answer holds. */
  async timestamps(url: string): Promise<string[]> {
    return ok<Record[]>(await this.get(url)).map((r) => r.timestamp.slice(0, 16));
  }
}

/** A MeasurementLab opened before and closed after each test of the calling suite. */
export function useMeasurementLab(): MeasurementLab {
  const m = new MeasurementLab();
  beforeEach(() => m.open());
  afterEach(() => m.lab.close());
  return m;
}
