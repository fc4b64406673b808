import { z } from "zod";
import { accountOf } from "../../auth.ts";
import { apiError } from "../../errors.ts";
import { requiredQueryParam } from "../../pagination.ts";
import { measurementResponses } from "../../schemas/measurement.ts";
import {
  deviceIdOf,
  exactPatient,
  knownDevice,
  NO_DEVICE,
  NO_PATIENT,
} from "../../services/lookups.ts";
import {
  MEASUREMENT_RULES,
  MeasurementPages,
  measurementQuery,
} from "../../services/measurements.ts";
import type { ApiContext, RoutePlugin } from "../../types.ts";

const TAGS = ["measurements"];
const SECURITY = [{ ApiKey: [] }];
const REQUIRED = "This field is required.";

/** A required query parameter: 400 keyed by its name when absent or blank. */
function required(value: string | undefined, name: string): string {
  if (value === undefined || value.trim() === "") throw apiError.field(name, REQUIRED);
  return value;
}

/**
 * /api/v2/hwi/ measurement paths of spec 4.4: the key's own account (no client domain). The
 * device parameter of device-measurements is not shown by the spec: rpmlab names it
 * hwi_device_id, the name the device id has everywhere else (spec 2.4, 6.2).
 */
export const v2MeasurementsRoutes: RoutePlugin = async (app, ctx) => {
  const pages = new MeasurementPages(ctx);
  patientMeasurementsRoute(app, ctx, pages, "/patient-measurements/", "(v2 path)");
  app.get(
    "/device-measurements/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Measurements of one device (v2 path)",
        description: `The device is named by the query parameter hwi_device_id (the spec does not show its name; rpmlab uses the device id's name of spec 2.4 and 6.2). Missing: 400 {"hwi_device_id": ["${REQUIRED}"]}; unknown: 404 "${NO_DEVICE}". ${MEASUREMENT_RULES}`,
        querystring: z.object({
          hwi_device_id: requiredQueryParam("The device's hwi_device_id (UUID, any case)."),
          ...measurementQuery,
        }),
        response: measurementResponses("An unknown hwi_device_id"),
      },
    },
    async (request, reply) => {
      const accountId = accountOf(request).id;
      const id = required(request.query.hwi_device_id, "hwi_device_id");
      const target = { deviceId: deviceIdOf(id) };
      return pages.send(request, reply, accountId, target, request.query, () =>
        knownDevice(ctx, accountId, id),
      );
    },
  );
};

/**
 * The same endpoint under the HWI prefix, {hwi}/hwi-patient-measurements/: spec 4.4 and the
 * spec 8 table name an endpoint "hwi-patient-measurements" beside the hwi-relative
 * patients/{id}/measurements and hwi-devices/{id}/measurements, so an integrator following
 * that naming calls it there.
 */
export const hwiPatientMeasurementsRoutes: RoutePlugin = async (app, ctx) => {
  const pages = new MeasurementPages(ctx);
  patientMeasurementsRoute(app, ctx, pages, "/hwi-patient-measurements/", "(hwi path)");
};

/** GET <path>?patient_id=: every device of a patient, by its external_id (spec 4.4). */
function patientMeasurementsRoute(
  app: Parameters<RoutePlugin>[0],
  ctx: ApiContext,
  pages: MeasurementPages,
  path: string,
  where: string,
): void {
  app.get(
    path,
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: `Measurements of every device of a patient ${where}`,
        description: `Served at /api/v2/hwi/patient-measurements/ and {hwi}/hwi-patient-measurements/ alike (spec 4.4 names the endpoint hwi-patient-measurements). patient_id is the patient's external_id, matched exactly as on patients/{id}/measurements/ (spec 4.4); missing: 400 {"patient_id": ["${REQUIRED}"]}; unknown: 404 "${NO_PATIENT}". The same limits as the other measurement endpoints. ${MEASUREMENT_RULES}`,
        querystring: z.object({
          patient_id: requiredQueryParam("The patient's external_id, exactly."),
          ...measurementQuery,
        }),
        response: measurementResponses("An unknown patient_id"),
      },
    },
    async (request, reply) => {
      const accountId = accountOf(request).id;
      const id = required(request.query.patient_id, "patient_id");
      const patientExternalId = await exactPatient(ctx, accountId, id);
      return pages.send(request, reply, accountId, { patientExternalId }, request.query);
    },
  );
}
