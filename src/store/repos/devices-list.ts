import { type Ctx, containsIgnoringCase, countOf, paged, templatedIn } from "../context.ts";
import type {
  DeviceFilter,
  DeviceRow,
  DeviceWithPatient,
  ListOptions,
  ListResult,
  PatientRow,
} from "../types.ts";
import { toDeviceRow } from "./device-rows.ts";
import { toPatientRow } from "./patients.ts";

/** Columns `search` looks in (wire-formats "Devices": the `search` filter of real clients). */
const SEARCHED = [
  "devices.name",
  "devices.hardware_uuid",
  "devices.sensor_id",
  "devices.status",
  "patients.external_id",
  "patients.name",
] as const;

/** Spec 4.3 hwi-devices list: filters, stable order (created, id), optional total. */
export async function listDevices(
  ctx: Ctx,
  accountId: string,
  filter: DeviceFilter,
  page: ListOptions | undefined,
): Promise<ListResult<DeviceWithPatient>> {
  const statuses =
    filter.status === undefined
      ? undefined
      : typeof filter.status === "string"
        ? [filter.status]
        : [...filter.status];
  // status=<an empty set> matches nothing, and so does properties__value of no values: `in ()`
  // is not valid SQL on PostgreSQL (a syntax error there, no rows on SQLite).
  const { propertyKey, propertyValue } = filter;
  if (statuses?.length === 0 || (typeof propertyValue === "object" && propertyValue.length === 0)) {
    return { rows: [], ...(page?.count ? { total: 0 } : {}) };
  }

  let q = ctx.db
    .selectFrom("devices")
    .leftJoin("patients", "patients.id", "devices.patient_id")
    .selectAll("devices")
    .where("devices.account_id", "=", accountId);
  if (propertyKey !== undefined || propertyValue !== undefined) {
    // Django: properties__key and properties__value in one filter() match the same property.
    q = q.where(({ exists, selectFrom }) =>
      exists(
        selectFrom("device_properties")
          .select("device_properties.device_id")
          .whereRef("device_properties.device_id", "=", "devices.id")
          .$if(propertyKey !== undefined, (s) =>
            s.where("device_properties.key", "=", propertyKey!),
          )
          .$if(propertyValue !== undefined, (s) =>
            s.where(
              "device_properties.value",
              "in",
              typeof propertyValue === "string" ? [propertyValue] : [...propertyValue!],
            ),
          ),
      ),
    );
  }
  if (statuses !== undefined) q = q.where("devices.status", "in", statuses);
  if (filter.patientExternalId !== undefined) {
    q = q.where("patients.external_id", "=", filter.patientExternalId);
  }
  if (filter.hardwareUuid !== undefined) {
    q = q.where("devices.hardware_uuid", "=", filter.hardwareUuid);
  }
  if (filter.hardwareUuidIexact !== undefined) {
    q = q.where("devices.hardware_uuid_lc", "=", filter.hardwareUuidIexact.toLowerCase());
  }
  if (filter.search !== undefined && filter.search !== "") {
    const search = filter.search;
    q = q.where(({ or }) => or(SEARCHED.map((c) => containsIgnoringCase(ctx, c, search))));
  }
  const rows = await paged(q.orderBy("devices.created").orderBy("devices.id"), page).execute();
  const devices = await withPatients(
    ctx,
    rows.map((r) => toDeviceRow(ctx, r)),
  );
  if (!page?.count) return { rows: devices };
  return { rows: devices, total: await countOf(q) };
}

/** Nests each device's patient record (spec 2.1: the same record as hwi-patients). */
export async function withPatients(
  ctx: Ctx,
  devices: readonly DeviceRow[],
): Promise<DeviceWithPatient[]> {
  const ids = [
    ...new Set(devices.flatMap((dev) => (dev.patientId === null ? [] : [dev.patientId]))),
  ];
  const patients = new Map<number, PatientRow>();
  // Adoption's lookups at each check-in: built once per list shape.
  const rows = await templatedIn(ctx, "patients.byIds", ids, (list) =>
    ctx.db.selectFrom("patients").selectAll().where("id", "in", list),
  );
  for (const r of rows) {
    const p = toPatientRow(r);
    patients.set(p.id, p);
  }
  return devices.map((dev) => ({
    ...dev,
    patient: dev.patientId === null ? null : (patients.get(dev.patientId) ?? null),
  }));
}
