import { RpmlabError } from "../core/errors.ts";
import type { Rng } from "../core/rng.ts";
import type { DeviceSettings } from "./capabilities/capability.ts";
import type { ProfilePlan } from "./plan.ts";
import type { ParamValues } from "./reading-builder.ts";

/** Filter param carrying the sensor's serial number (spec 2.8 inhaler serial_number). */
const SERIAL_KEY = "serial_number";
/** Alphanumeric characters of drawn serial numbers (no I or O, easily misread as 1 and 0). */
const ALNUM = "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789";

function drawSerial(rng: Rng): string {
  const length = rng.int(6, 8);
  let out = "";
  for (let i = 0; i < length; i++) out += ALNUM[rng.int(0, ALNUM.length - 1)];
  return out;
}

/**
 * filter_params values fixed for a device: its serial number, which is also its sensor id
 * (spec 2.4: the inhaler's sensor_id is the serial number of the sensor), given in the settings
 * or drawn from the device's "serial" stream, and checked against the profile's patterns.
 */
export function deviceConstants(
  plan: ProfilePlan,
  settings: DeviceSettings,
  rng: Rng,
): ParamValues {
  const param = plan.params.get(SERIAL_KEY);
  if (param === undefined) return {};
  const given = settings.serialNumber;
  const serial = given ?? drawSerial(rng.fork("serial"));
  const patterns = [
    param.kind === "pattern" ? param.pattern : undefined,
    plan.profile.sensor_id.pattern,
  ];
  for (const pattern of patterns) {
    if (pattern !== undefined && !new RegExp(pattern).test(serial)) {
      throw new RpmlabError(
        given === undefined ? "E_PROFILE_INVALID" : "E_CONFIG_INVALID",
        `serial number "${serial}" does not match ${plan.profile.name}'s pattern ${pattern}`,
        { field: "serialNumber" },
      );
    }
  }
  return { [SERIAL_KEY]: serial };
}
