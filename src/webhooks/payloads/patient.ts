import { type PatientJson, patientJson } from "../../api/schemas/patient.ts";
import { toIsoMicros } from "../../core/time.ts";
import type { Ms, PatientRow } from "../../store/types.ts";

/** What happened to the patient. */
export type PatientAction = "created" | "updated" | "deleted";

/**
 * The patient webhook (spec 6.1 names the kind; its payload is "not shown", so this is
 * rpmlab's): the action, the patient_id (the external_id, as in the other webhooks), the
 * previous external_id when an update renamed the patient (else null), when it happened, and the
 * patient record as GET hwi-patients/{external_id}/ returns it — as it was just before a delete.
 */
export interface PatientWebhookBody {
  readonly action: PatientAction;
  readonly patient_id: string;
  readonly previous_patient_id: string | null;
  readonly timestamp: string;
  readonly patient: PatientJson;
}

export function patientWebhookBody(
  action: PatientAction,
  patient: PatientRow,
  at: Ms,
  previousExternalId: string | null = null,
): PatientWebhookBody {
  return {
    action,
    patient_id: patient.externalId,
    previous_patient_id:
      previousExternalId === null || previousExternalId === patient.externalId
        ? null
        : previousExternalId,
    timestamp: toIsoMicros(at),
    patient: patientJson(patient),
  };
}
