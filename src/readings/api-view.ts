import { Catalogue } from "../catalogue/catalogue.ts";
import type { Profile } from "../catalogue/schema.ts";
import { Rng } from "../core/rng.ts";
import { dropStored } from "./dedupe.ts";
import { generateReadings } from "./generate.ts";
import { PatientModels } from "./patients.ts";
import { type ApiMeasurement, renderReadings } from "./render.ts";

export interface ApiViewRequest {
  /** Device name, current or legacy (spec 2.4). */
  readonly device: string;
  /** Patient model name. */
  readonly patient: string;
  readonly seed: number | string;
  readonly days: number;
  readonly start?: number;
  readonly duplicateRate?: number;
  /** Keep re-sent readings the API would store only once. */
  readonly includeDuplicates?: boolean;
  readonly catalogue?: Catalogue;
  readonly patients?: PatientModels;
}

export interface ApiView {
  readonly profile: Profile;
  readonly records: ApiMeasurement[];
  /** Re-sent readings left out (0 with includeDuplicates). */
  readonly droppedReadings: number;
  /** What a user should know to read the output right (printed on stderr by the CLI). */
  readonly notes: string[];
}

/**
 * What `rpmlab readings` shows: one device of a patient model, generated from a seed and
 * rendered as the API returns the records. The API stores nothing twice, so re-sent readings
 * are dropped unless asked for.
 */
export function apiView(request: ApiViewRequest): ApiView {
  const catalogue = request.catalogue ?? Catalogue.load();
  const patients = request.patients ?? PatientModels.load();
  const profile = catalogue.get(request.device);
  const patient = patients.get(request.patient);
  // Each model its own streams: two models printed with one seed are two patients (own
  // patient_id, device ids, missed days), not one patient's ids and dice under two physiologies.
  const rng = new Rng(request.seed).fork(`patient:${patient.name}`);
  const generated = generateReadings({
    devices: [profile],
    patient,
    rng,
    days: request.days,
    start: request.start,
    duplicateRate: request.duplicateRate,
  });
  const kept = request.includeDuplicates
    ? { readings: generated, droppedReadings: 0 }
    : dropStored(generated);
  const records = renderReadings(kept.readings, { profiles: [profile], rng: rng.fork("api") });
  const notes: string[] = [];
  if (profile.family === "fetal_doppler" && patient.physiology.pregnancy === undefined) {
    notes.push(
      `patient model "${patient.name}" is not pregnant: the fetal doppler finds no heartbeat, so every capture is an invalid_event (try --patient pregnancy)`,
    );
  }
  return { profile, records, droppedReadings: kept.droppedReadings, notes };
}
