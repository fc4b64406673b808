import { z } from "zod";
import { accountOf } from "../../auth.ts";
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
import type { RoutePlugin } from "../../types.ts";

const TAGS = ["measurements"];
const SECURITY = [{ ApiKey: [] }];
const querystring = z.object(measurementQuery);

/** The HWI measurement paths of spec 4.4 (wire-formats "Measurement queries"). */
export const measurementsRoutes: RoutePlugin = async (app, ctx) => {
  const pages = new MeasurementPages(ctx);
  app.get(
    "/patients/:externalId/measurements/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Measurements of every device of a patient",
        description: `Every device the patient's readings came from, by the patient_id the readings carry (spec 6.2: stable across replacement and unlinking). The path's id must equal the patient's external_id exactly, case included (spec 4.4): otherwise 404 "${NO_PATIENT}". ${MEASUREMENT_RULES}`,
        params: z.object({
          externalId: z.string().describe("The patient's external_id, exactly."),
        }),
        querystring,
        response: measurementResponses("An external_id no patient has exactly"),
      },
    },
    async (request, reply) => {
      const accountId = accountOf(request).id;
      const patientExternalId = await exactPatient(ctx, accountId, request.params.externalId);
      return pages.send(request, reply, accountId, { patientExternalId }, request.query);
    },
  );

  app.get(
    "/hwi-devices/:id/measurements/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Measurements of one device",
        description: `The readings stored for this hwi_device_id (spec 4.4). Unknown id: 404 "${NO_DEVICE}". ${MEASUREMENT_RULES}`,
        params: z.object({ id: z.string().describe("The hwi_device_id (UUID, any case).") }),
        querystring,
        response: measurementResponses("An unknown hwi_device_id"),
      },
    },
    async (request, reply) => {
      const accountId = accountOf(request).id;
      const { id } = request.params;
      const target = { deviceId: deviceIdOf(id) };
      return pages.send(request, reply, accountId, target, request.query, () =>
        knownDevice(ctx, accountId, id),
      );
    },
  );
};
