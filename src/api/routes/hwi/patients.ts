import { z } from "zod";
import { accountOf } from "../../auth.ts";
import { BODY_IGNORED } from "../../content-types.ts";
import { apiError } from "../../errors.ts";
import {
  clientErrorResponses,
  DETAIL_SCHEMA,
  describe,
  FIELD_ERRORS_SCHEMA,
} from "../../json-schema.ts";
import { lookupFirst } from "../../lookup-first.ts";
import { listMode, listSchemas, paginate, paginationQuery } from "../../pagination.ts";
import {
  PATIENT_JSON_SCHEMA,
  PatientBody,
  PatientPatchBody,
  patientJson,
} from "../../schemas/patient.ts";
import { PATIENT_NOT_FOUND, patientService } from "../../services/patients.ts";
import type { RoutePlugin } from "../../types.ts";

const TAGS = ["hwi-patients"];
const SECURITY = [{ ApiKey: [] }];
const PATIENT = describe(PATIENT_JSON_SCHEMA, "The patient record (spec 2.1).");
const LIST = listSchemas(PATIENT_JSON_SCHEMA);
const params = z.object({
  externalId: z.string().describe("The patient's external_id; matched ignoring case (spec 2.1)."),
});
const notFound = describe(DETAIL_SCHEMA, `Unknown external_id: "${PATIENT_NOT_FOUND}"`);
const invalid = describe(FIELD_ERRORS_SCHEMA, "Validation error keyed by field.");

const VERIFICATION =
  'Address verification runs when the address is written: with address, city, state and zip_code all present it answers address_status Verified or Invalid with address_verified_by "internal"; with one missing, address_status stays null; confirm_address true bypasses it (spec 3).';

/** hwi-patients (spec 2.1, 4.1). */
export const patientsRoutes: RoutePlugin = async (app, ctx) => {
  const patients = patientService({
    store: ctx.store,
    clock: ctx.clock,
    undeliverableAddresses: ctx.config.undeliverableAddresses,
    onOutbox: () => ctx.webhooks.nudge(),
  });
  const knownPatient = lookupFirst(async ({ externalId }, request) => {
    const patient = await ctx.store.patients.get(accountOf(request).id, externalId ?? "");
    if (patient === null) throw apiError.notFound(PATIENT_NOT_FOUND);
  });

  app.post(
    "/hwi-patients/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Create a patient",
        description: `${VERIFICATION} An external_id that exists (ignoring case) is rejected with 400 {"external_id": ["patient with this external id already exists."]} (spec 7.3; the status is rpmlab's choice, as a DRF unique field answers): use PUT or PATCH, or GET first.`,
        body: PatientBody,
        response: { 201: PATIENT, 400: invalid, ...clientErrorResponses() },
      },
    },
    async (request, reply) => {
      const patient = await patients.create(accountOf(request).id, request.body);
      return reply.code(201).send(patientJson(patient));
    },
  );

  app.get(
    "/hwi-patients/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "List patients",
        description:
          "Always the paginated envelope, with or without page (spec 4.1), oldest first.",
        querystring: z.object(paginationQuery),
        response: {
          200: describe(LIST.envelope, "The paginated envelope (spec 2.6)."),
          400: invalid,
          404: DETAIL_SCHEMA,
          ...clientErrorResponses(),
        },
      },
    },
    async (request) => {
      const accountId = accountOf(request).id;
      return paginate(
        request,
        listMode(request.query, { alwaysPaginated: true }),
        (options) => ctx.store.patients.list(accountId, options),
        patientJson,
        ctx.config.baseUrl,
      );
    },
  );

  app.get(
    "/hwi-patients/:externalId/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Get a patient",
        params,
        response: { 200: PATIENT, 404: notFound, ...clientErrorResponses() },
      },
    },
    async (request) => {
      const patient = await ctx.store.patients.get(
        accountOf(request).id,
        request.params.externalId,
      );
      if (patient === null) throw apiError.notFound(PATIENT_NOT_FOUND);
      return patientJson(patient);
    },
  );

  app.put(
    "/hwi-patients/:externalId/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Replace a patient",
        description: `The full record: fields left out return to their defaults (null; sms_opt_in true; confirm_address false). external_id is required; a new value renames the patient. ${VERIFICATION}`,
        params,
        body: PatientBody,
        response: { 200: PATIENT, 400: invalid, 404: notFound, ...clientErrorResponses() },
      },
      preParsing: knownPatient,
    },
    async (request) => {
      const { id } = accountOf(request);
      const patient = await patients.replace(id, request.params.externalId, request.body);
      // Spec 3: a request held for this patient's address ships once it is deliverable, and one
      // not shipped yet waits for the client again when it no longer is.
      await ctx.devices.reviewRequests(id, patient.externalId);
      return patientJson(patient);
    },
  );

  app.patch(
    "/hwi-patients/:externalId/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Update some fields of a patient",
        description: `Any subset of fields; the answer is the full record including address_status. ${VERIFICATION} Sending any address field or confirm_address re-verifies.`,
        params,
        body: PatientPatchBody,
        response: { 200: PATIENT, 400: invalid, 404: notFound, ...clientErrorResponses() },
      },
      preParsing: knownPatient,
    },
    async (request) => {
      const { id } = accountOf(request);
      const patient = await patients.update(id, request.params.externalId, request.body);
      // Spec 3: a request held for this patient's address ships once it is deliverable, and one
      // not shipped yet waits for the client again when it no longer is.
      await ctx.devices.reviewRequests(id, patient.externalId);
      return patientJson(patient);
    },
  );

  app.delete(
    "/hwi-patients/:externalId/",
    {
      // DRF's destroy never reads request.data: a body of any type is ignored.
      config: BODY_IGNORED,
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Delete a patient",
        description:
          "204 with no body. Devices linked to the patient stay active, without patient data (spec 4.1): their readings keep their history with patient_id null, so a patient created later with this external_id starts with none; a device request of theirs not shipped yet goes to Client Action Required (no address to ship to) until a patient is attached.",
        params,
        response: {
          204: { type: "null", description: "Deleted; no body." },
          404: notFound,
          ...clientErrorResponses(),
        },
      },
    },
    async (request, reply) => {
      const { id } = accountOf(request);
      const detached = await patients.delete(id, request.params.externalId);
      // Spec 3: their requests not shipped yet have no address left.
      await ctx.devices.holdPatientless(id, detached);
      return reply.code(204).send();
    },
  );
};
