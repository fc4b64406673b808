import { apiError } from "../errors.ts";
import type { ApiContext } from "../types.ts";

/**
 * The records a URL names, looked up in the account, with Django's get_object_or_404 texts for
 * the 404 (what a DRF view answers).
 */

export const NO_PATIENT = "No Patient matches the given query.";
export const NO_DEVICE = "No Device matches the given query.";

/** Spec 4.4: the patient's id must equal its external_id exactly (not ignoring case). */
export async function exactPatient(
  ctx: ApiContext,
  accountId: string,
  externalId: string,
): Promise<string> {
  const patient = await ctx.store.patients.get(accountId, externalId);
  if (patient === null || patient.externalId !== externalId) throw apiError.notFound(NO_PATIENT);
  return patient.externalId;
}

/** A device id as the store keys it: UUIDs match ignoring case. */
export function deviceIdOf(raw: string): string {
  return raw.trim().toLowerCase();
}

/** The device's id when it is a device of the account; 404 otherwise. */
export async function knownDevice(ctx: ApiContext, accountId: string, id: string): Promise<string> {
  const device = await ctx.store.devices.get(accountId, deviceIdOf(id));
  if (device === null) throw apiError.notFound(NO_DEVICE);
  return device.id;
}
