import type { Rng } from "../../core/rng.ts";

/** Real city, state and ZIP triples, so every drawn address verifies (spec 3). */
const PLACES: readonly [city: string, state: string, zip: string][] = [
  ["Springfield", "IL", "62704"],
  ["Columbus", "OH", "43215"],
  ["Austin", "TX", "78701"],
  ["Denver", "CO", "80202"],
  ["Raleigh", "NC", "27601"],
  ["Madison", "WI", "53703"],
  ["Boise", "ID", "83702"],
  ["Albany", "NY", "12207"],
  ["Tucson", "AZ", "85701"],
  ["Portland", "ME", "04101"],
];
const STREETS = ["Maple", "Oak", "Cedar", "Elm", "Pine", "Lake", "Hill", "Park", "Main", "River"];
const SUFFIXES = ["Street", "Avenue", "Road", "Lane", "Drive", "Court"];

/** Spec 2.1's address fields of a patient. */
export interface PatientAddress {
  readonly address: string;
  readonly city: string;
  readonly state: string;
  readonly zip_code: string;
}

/** A deliverable US address for a patient, drawn from the patient's stream. */
export function patientAddress(rng: Rng): PatientAddress {
  const [city, state, zip] = rng.pick(PLACES);
  return {
    address: `${rng.int(1, 9999)} ${rng.pick(STREETS)} ${rng.pick(SUFFIXES)}`,
    city,
    state,
    zip_code: zip,
  };
}
