import { z } from "zod";
import { profileRuleIssues } from "./profile-rules.ts";
import { onStepGrid } from "./step-grid.ts";

/**
 * Schema of a device profile (profiles/devices/*.yaml). Everything spec 2.8 says about a device
 * type is data in its profile; code reads it through this schema only. Rules that relate several
 * fields live in profile-rules.ts.
 */

/** A BLE device advertises its sensor code in one octet of its scan response (advertising-data.ts). */
const MAX_SENSOR_CODE = 255;
const sensorCode = z
  .string()
  // Aborts: a code that is no number is not also said to be over 255.
  .regex(/^\d{1,3}$/, { error: 'sensor code is a decimal string, e.g. "10"', abort: true })
  .refine((code) => Number(code) <= MAX_SENSOR_CODE, {
    error: (issue) =>
      `sensor code ${String(issue.input)} is over ${MAX_SENSOR_CODE}: the scan response carries it in one octet`,
  });
const uuid16or128 = z
  .string()
  .regex(
    /^([0-9A-F]{4}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/,
    'a 16-bit UUID as 4 upper-case hex digits ("2A35") or a lower-case 128-bit UUID',
  );

function compiles(source: string): boolean {
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
}

/** A regular expression that must match a whole value, e.g. '^[0-9A-F]{12}$'. */
const anchoredPattern = z
  .string()
  .refine(compiles, "not a valid regular expression")
  .refine(
    (p) => p.startsWith("^") && p.endsWith("$"),
    "pattern must be anchored with ^ and $ so it matches the whole value",
  );

/** Meaning and units of value_1 or value_2 of a metric, with the device's measuring range. */
export const valueSpecSchema = z
  .strictObject({
    meaning: z.string().min(1),
    units: z.string().min(1),
    /** Smallest and largest value the device reports (its measuring range). */
    min: z.number(),
    max: z.number(),
    /** Resolution: every reported value is a multiple of this. */
    step: z.number().positive(),
  })
  .superRefine((value, ctx) => {
    // Generators clamp to [min, max] and round to the step; codecs reject values off the grid.
    if (value.min > value.max) {
      ctx.addIssue({ code: "custom", path: ["max"], message: `max is below min (${value.min})` });
    }
    for (const bound of ["min", "max"] as const) {
      if (!onStepGrid(value[bound], value.step)) {
        ctx.addIssue({
          code: "custom",
          path: [bound],
          message: `${value[bound]} is not a multiple of step ${value.step}`,
        });
      }
    }
  });
export type ValueSpec = z.infer<typeof valueSpecSchema>;

/**
 * How a metric is used downstream: `vital` readings, `adherence` events (medication taken),
 * `status` data that an account can leave out of webhooks (spec 6.3.3), other device `event`s.
 */
export const metricCategory = z.enum(["vital", "adherence", "status", "event"]);

export const metricSchema = z.strictObject({
  /** API format name (spec 2.8), e.g. blood_pressure. */
  name: z.string().regex(/^[a-z][a-zA-Z0-9_]*$/),
  display_name: z.string().min(1),
  vital: z.boolean(),
  category: metricCategory,
  value_1: valueSpecSchema,
  /** null: the metric has no value 2, rendered "0.00". */
  value_2: valueSpecSchema.nullable(),
  /**
   * always: in every reading of the device; when_detected: only when the condition occurs
   * (irregular_heartbeat); event: emitted on its own when the event happens.
   */
  emitted: z.enum(["always", "when_detected", "event"]),
  /** Keys of `filter_params` (defined at profile level) this metric's records carry. */
  filter_params: z.array(z.string()).default([]),
  /**
   * What the device reports for a reading above its measuring range (spec 2.8, glucometer alert):
   * the top value (the meter's "HI") with a filter param flagging it.
   */
  above_range: z
    .strictObject({
      reported_as: z.number(),
      filter_param: z.string(),
      value: z.string(),
    })
    .optional(),
});
export type MetricSpec = z.infer<typeof metricSchema>;

/** Allowed values of one filter_params key (spec 2.8, "Filter params by device type"). */
export const filterParamSchema = z.discriminatedUnion("kind", [
  z.strictObject({ key: z.string(), kind: z.literal("positive_integer") }),
  z.strictObject({
    key: z.string(),
    kind: z.literal("enum"),
    values: z.array(z.string()).min(1),
    /** always: on every record of the metric; when_applicable: only when the condition holds. */
    presence: z.enum(["always", "when_applicable"]).default("always"),
  }),
  z.strictObject({ key: z.string(), kind: z.literal("pattern"), pattern: anchoredPattern }),
  z.strictObject({
    key: z.string(),
    kind: z.literal("flags"),
    /** metric name → flag name → allowed values ("bit": 0 or 1; "positive_integer"). */
    by_metric: z.record(z.string(), z.record(z.string(), z.enum(["bit", "positive_integer"]))),
  }),
]);
export type FilterParamSpec = z.infer<typeof filterParamSchema>;

/**
 * A device property the type accepts (spec 2.4 `properties`). `webhook_id`: a webhook UUID, or an
 * empty string to send to all webhooks again (spec 6.3.2).
 */
export const devicePropertySchema = z.strictObject({
  key: z.string().regex(/^[a-z][a-z0-9_]*$/),
  kind: z.enum(["webhook_id"]),
});
export type DevicePropertySpec = z.infer<typeof devicePropertySchema>;

export const gattCharacteristicSchema = z.strictObject({
  uuid: uuid16or128,
  /** The service holding it, when not the profile's primary service (e.g. Battery 180F). */
  service: uuid16or128.optional(),
  role: z.enum(["measurement", "context", "feature", "battery", "racp", "time", "record"]),
  properties: z.array(z.enum(["read", "write", "notify", "indicate"])).min(1),
});
export type GattCharacteristicSpec = z.infer<typeof gattCharacteristicSchema>;

export const gattSchema = z.strictObject({
  /** Primary service: a SIG service (1810 BP, 181D weight, 1808 glucose, 1822 PLX) or ours. */
  service: uuid16or128,
  /** Name of the codec mapping in src/gatt/mappings that turns readings into values and back. */
  mapping: z.string().min(1),
  characteristics: z.array(gattCharacteristicSchema).min(1),
});

export const profileFamily = z.enum([
  "scale",
  "pulse_oximeter",
  "blood_pressure_monitor",
  "glucometer",
  "peak_flow_meter",
  "fetal_doppler",
  "inhaler_sensor",
  "medication_cap_sensor",
  "proximity_band",
]);

export const profileSchema = z
  .strictObject({
    /** Name as hwi-device-types returns it, e.g. "Vendor BPM - Wide Range". */
    name: z.string().min(1),
    legacy_names: z.array(z.string()).default([]),
    /** Device type of spec 2.8 this profile belongs to; cuff sizes share one. */
    family: profileFamily,
    description: z.string().min(1),
    sku: z.string().min(1),
    /** Decimal string; null for direct-cellular devices (spec 2.8). */
    sensor_code: sensorCode.nullable(),
    connectivity: z.enum(["gateway", "cellular"]),
    /** Readings taken out of range are kept on the device and uploaded later (spec 2.8). */
    stores_offline: z.boolean(),
    /** Identity the device is tied to: a gateway id, or the device's own IMEI. */
    identity: z.enum(["gateway", "imei"]),
    sensor_id: z.strictObject({
      required: z.boolean(),
      /** What the sensor id is, e.g. "serial number of the sensor". */
      meaning: z.string().optional(),
      pattern: anchoredPattern.optional(),
    }),
    /**
     * How many of this type may share one gateway: one per sensor code (default rule of 2.8),
     * several told apart by sensor_id (inhaler), several with different sensor codes (med cap).
     * `none` for direct-cellular devices, which have no gateway.
     */
    per_gateway: z.enum([
      "one_per_sensor_code",
      "many_by_sensor_id",
      "many_with_distinct_sensor_codes",
      "none",
    ]),
    cadence: z.discriminatedUnion("kind", [
      /** Transmits whenever the patient takes a reading. */
      z.strictObject({ kind: z.literal("per_reading") }),
      /** Transmits on a fixed period (med cap: every 12 hours). */
      z.strictObject({ kind: z.literal("interval"), every_hours: z.number().positive() }),
      /** Sent only along with another device's metrics (proximity band). */
      z.strictObject({ kind: z.literal("with_other_device") }),
    ]),
    /** Cuff circumference range for blood pressure cuffs, in cm. */
    cuff_cm: z.tuple([z.number(), z.number()]).optional(),
    /** Device properties the type accepts (spec 2.8: every type takes measurement_webhook_id). */
    device_properties: z.array(devicePropertySchema).default([]),
    metrics: z.array(metricSchema).min(1),
    filter_params: z.array(filterParamSchema).default([]),
    gatt: gattSchema,
  })
  // Run the cross-field rules even when a field failed its own check, so one validation run
  // reports every problem of a file; the rules read the partly parsed value defensively.
  .superRefine(
    (profile, ctx) => {
      for (const issue of profileRuleIssues(profile)) ctx.addIssue({ code: "custom", ...issue });
    },
    { when: () => true },
  );

export type Profile = z.infer<typeof profileSchema>;
export type ProfileFamily = Profile["family"];
