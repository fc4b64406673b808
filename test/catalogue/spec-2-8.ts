/**
 * Spec 2.8 (with the cuff sizes and legacy name of 2.4) written out by hand as test data,
 * independently of profiles/devices/*.yaml, so a drift in any profile fails a test. Where the
 * lab had to decide something the spec leaves open, the entry says "lab decision".
 */
import type { ProfileFamily } from "../../src/catalogue/schema.ts";

/** A value with units; `meaning`: words the profile's meaning must contain, when 2.8 gives any. */
export interface SpecUnits {
  units: string;
  meaning?: string;
}
/** An event value: the integers 2.8 says it takes ("1 open, 0 close" → [0, 1]; "(1)" → [1]). */
export interface SpecFlag {
  flag: readonly number[];
}
export interface SpecMetric {
  name: string;
  value_1: SpecUnits | SpecFlag;
  /** null: 2.8 gives no value 2 ("none" or not mentioned). */
  value_2: SpecUnits | null;
  /** filter_params keys this metric's records carry. */
  params: readonly string[];
}
export interface SpecDeviceType {
  /** Row of the 2.8 catalogue table. */
  type: string;
  /** Profile names of that row (the BPM row covers the cuff sizes and the wrist model). */
  profiles: readonly string[];
  family: ProfileFamily;
  sensorCode: string | null;
  storesOffline: boolean;
  perGateway:
    | "one_per_sensor_code"
    | "many_by_sensor_id"
    | "many_with_distinct_sensor_codes"
    | "none";
  cadence:
    | { kind: "per_reading" }
    | { kind: "interval"; every_hours: number }
    | { kind: "with_other_device" };
  sensorIdRequired: boolean;
  metrics: readonly SpecMetric[];
}

const units = (u: string, meaning?: string): SpecUnits =>
  meaning ? { units: u, meaning } : { units: u };
const FLAG_0_1: SpecFlag = { flag: [0, 1] };
const FLAG_1: SpecFlag = { flag: [1] };
const metric = (
  name: string,
  value_1: SpecUnits | SpecFlag,
  value_2: SpecUnits | null,
  params: readonly string[],
): SpecMetric => ({ name, value_1, value_2, params });

/** "Vital metrics" list of 2.8, plus the three inhaler metrics 2.8 marks vital. */
export const VITAL = new Set([
  "weight",
  "spO2",
  "pulse",
  "perfusion_index",
  "blood_pressure",
  "irregular_heartbeat",
  "glucose",
  "peak_expiratory_flow",
  "forced_expiratory_volume",
  "fetal_pulse",
  "inhaler_medication_event",
  "inhaler_respiratory_flow_log",
  "inhaler_respiratory_timing_log",
]);

/**
 * Categories: med cap metrics as 2.8 labels them; battery and the other status data of 6.3.3;
 * vital metrics are "vital"; everything else is a plain "event".
 */
export const STATUS = new Set([
  "battery_percentage",
  "low_battery_event",
  "capsensor_time_updated_event",
  "capsensor_bluetooth_event",
]);
export const ADHERENCE = new Set(["capsensor_open_close_event", "no_measurement_event"]);

const MI = ["measurement_index"];
const GLUCOSE_PARAMS = ["meal_context", "measurement_location", "alert"];
const INHALER = ["serial_number", "device_log_index"];

const scaleMetrics = [
  metric("weight", units("pounds"), null, []),
  metric("battery_percentage", units("%"), null, []),
];
const bpMetrics = [
  metric("blood_pressure", units("mmHg", "systolic"), units("mmHg", "diastolic"), MI),
  metric("pulse", units("beats per minute"), null, MI),
  metric("irregular_heartbeat", FLAG_1, null, MI),
  metric("battery_percentage", units("%"), null, MI),
];
const glucometerMetrics = [
  metric("glucose", units("mg/dL"), null, GLUCOSE_PARAMS),
  metric("battery_percentage", units("%"), null, []),
];
const gateway = (
  type: string,
  profiles: readonly string[],
  family: ProfileFamily,
  sensorCode: string,
  storesOffline: boolean,
  metrics: readonly SpecMetric[],
): SpecDeviceType => ({
  type,
  profiles,
  family,
  sensorCode,
  storesOffline,
  perGateway: "one_per_sensor_code",
  cadence: { kind: "per_reading" },
  sensorIdRequired: false,
  metrics,
});
const cellular = (
  type: string,
  profile: string,
  family: ProfileFamily,
  storesOffline: boolean,
  metrics: readonly SpecMetric[],
): SpecDeviceType => ({
  type,
  profiles: [profile],
  family,
  sensorCode: null,
  storesOffline,
  perGateway: "none",
  cadence: { kind: "per_reading" },
  sensorIdRequired: false,
  metrics,
});

export const DEVICE_TYPES: readonly SpecDeviceType[] = [
  gateway("Scale (standard)", ["Vendor Scale"], "scale", "34", true, scaleMetrics),
  gateway("Scale (extra large)", ["Vendor Scale XL"], "scale", "33", true, scaleMetrics),
  gateway("Bariatric scale", ["Vendor Bariatric Scale"], "scale", "13", false, scaleMetrics),
  gateway("Pulse oximeter", ["Vendor Pulse Ox"], "pulse_oximeter", "24", true, [
    metric("spO2", units("%", "oxygen saturation"), null, MI),
    metric("pulse", units("beats per minute"), null, MI),
    metric("perfusion_index", units("%"), null, MI),
    metric("battery_percentage", units("%"), null, MI),
  ]),
  gateway(
    "Blood pressure monitor",
    ["Vendor BPM - S", "Vendor BPM - Wide Range", "Vendor BPM - XL", "Vendor BPM - Wrist"],
    "blood_pressure_monitor",
    "10",
    true,
    bpMetrics,
  ),
  gateway("Glucometer", ["Vendor Glucometer"], "glucometer", "12", true, glucometerMetrics),
  gateway("Peak flow meter", ["Vendor Peak Flow Meter"], "peak_flow_meter", "17", false, [
    metric("peak_expiratory_flow", units("L/min"), null, MI),
    metric("forced_expiratory_volume", units("L"), null, MI),
  ]),
  gateway("Fetal doppler", ["Vendor Fetal Doppler"], "fetal_doppler", "37", false, [
    metric("fetal_pulse", units("beats per minute"), null, MI),
    // Lab decision: 2.8 gives invalid_event no values; it is sent with value 1 = 1.
    metric("invalid_event", FLAG_1, null, ["measurement_index", "error"]),
  ]),
  {
    ...gateway("Inhaler sensor", ["Vendor Inhaler Sensor"], "inhaler_sensor", "25", true, [
      metric("inhaler_medication_event", FLAG_1, null, [...INHALER, "angle", "flags"]),
      metric("low_battery_event", FLAG_0_1, null, INHALER),
      metric("inhaler_turbohaler_rotation_event", FLAG_0_1, null, [...INHALER, "angle", "flags"]),
      metric(
        "inhaler_respiratory_flow_log",
        units("L/min", "max flow"),
        units("L/min", "average flow"),
        [...INHALER, "flags"],
      ),
      metric(
        "inhaler_respiratory_timing_log",
        units("s", "duration"),
        units("s", "time to peak"),
        INHALER,
      ),
      metric("inhaler_shake_detection_event", FLAG_0_1, units("s", "shake duration"), [
        ...INHALER,
        "flags",
      ]),
      metric("inhaler_inhaler_installed_event", FLAG_0_1, null, INHALER),
      metric("inhaler_medication_cap_event", FLAG_0_1, null, INHALER),
    ]),
    perGateway: "many_by_sensor_id",
    sensorIdRequired: true,
  },
  {
    ...gateway(
      "Medication cap sensor",
      ["Vendor Medication Cap"],
      "medication_cap_sensor",
      "27",
      true,
      [
        metric("capsensor_open_close_event", FLAG_0_1, null, []),
        metric("no_measurement_event", FLAG_1, null, []),
        metric("low_battery_event", FLAG_1, null, []),
        metric("capsensor_time_updated_event", FLAG_1, null, []),
        metric("capsensor_bluetooth_event", FLAG_0_1, null, []),
      ],
    ),
    perGateway: "many_with_distinct_sensor_codes",
    cadence: { kind: "interval", every_hours: 12 },
  },
  {
    ...gateway("Proximity band", ["Vendor Proximity Band"], "proximity_band", "44", false, [
      metric("beacon_proximity_event", FLAG_0_1, null, ["beacon_id"]),
      metric("beacon_id_event", FLAG_0_1, null, ["beacon_id"]),
    ]),
    cadence: { kind: "with_other_device" },
  },
  cellular(
    "Cellular blood pressure monitor",
    "Vendor Cellular BPM",
    "blood_pressure_monitor",
    true,
    bpMetrics,
  ),
  cellular(
    "Cellular glucometer",
    "Vendor Cellular Glucometer",
    "glucometer",
    true,
    glucometerMetrics,
  ),
  // "each with value 2 a standard deviation" (same units); 2.8 lists no battery_percentage.
  cellular("Cellular pulse oximeter", "Vendor Cellular Pulse Ox", "pulse_oximeter", false, [
    metric("spO2", units("%", "oxygen saturation"), units("%", "standard deviation"), MI),
    metric("pulse", units("beats per minute"), units("beats per minute", "standard deviation"), MI),
    metric("perfusion_index", units("%"), units("%", "standard deviation"), MI),
  ]),
  cellular("Cellular scale", "Vendor Cellular Scale", "scale", true, scaleMetrics),
];

/** One key of the "Filter params by device type" table, as the lab checks it. */
export type SpecFilterParam =
  | { kind: "positive_integer" }
  | { kind: "enum"; values: readonly string[]; presence: "always" | "when_applicable" }
  /** 2.8 describes these in words; the profile's pattern must accept and reject these samples. */
  | { kind: "pattern"; accepts: readonly string[]; rejects: readonly string[] }
  | { kind: "flags"; by_metric: Record<string, Record<string, "bit" | "positive_integer">> };

const POSITIVE_INTEGER = { kind: "positive_integer" } as const;
const ORIENTATION = {
  respiration_enabled: "bit",
  orientation_enabled: "bit",
  orientation_stored: "bit",
  orientation_valid: "bit",
} as const;

/**
 * The filter-params table by family. Lab decision: a row applies to the direct-cellular device of
 * the same kind too (a cellular BPM reading is several records that need one measurement_index).
 */
export const FILTER_PARAMS: Record<ProfileFamily, Record<string, SpecFilterParam>> = {
  scale: {},
  medication_cap_sensor: {},
  pulse_oximeter: { measurement_index: POSITIVE_INTEGER },
  blood_pressure_monitor: { measurement_index: POSITIVE_INTEGER },
  peak_flow_meter: { measurement_index: POSITIVE_INTEGER },
  fetal_doppler: {
    measurement_index: POSITIVE_INTEGER,
    error: {
      kind: "enum",
      values: [
        "6 seconds of data received but some values were 0",
        "6 seconds of data received but the range of values exceeded 5%",
      ],
      presence: "always",
    },
  },
  glucometer: {
    alert: { kind: "enum", values: ["sensor_result_above_range"], presence: "when_applicable" },
    meal_context: {
      kind: "enum",
      values: ["pre-prandial", "post-prandial", "fasting"],
      presence: "always",
    },
    measurement_location: {
      kind: "enum",
      values: ["finger", "alternative site", "earlobe", "control solution", "N/A"],
      presence: "always",
    },
  },
  inhaler_sensor: {
    angle: {
      kind: "enum",
      values: [
        "NA",
        "0 to 22.5",
        "22.5 to 45",
        "45 to 67.5",
        "67.5 to 90",
        "90 to 112.5",
        "112.5 to 135",
        "135 to 157.5",
        "157.5 to 180",
      ],
      presence: "always",
    },
    flags: {
      kind: "flags",
      by_metric: {
        inhaler_respiratory_flow_log: {
          inhalation_valid: "bit",
          flow_error: "bit",
          exhalation_detected: "bit",
        },
        inhaler_shake_detection_event: { shake_intensity: "positive_integer" },
        inhaler_medication_event: ORIENTATION,
        inhaler_turbohaler_rotation_event: ORIENTATION,
      },
    },
    // "6 to 8 alphanumeric characters"
    serial_number: {
      kind: "pattern",
      accepts: ["A1B2C3", "abc12345", "ZZ00ZZ0"],
      rejects: ["A1B2C", "A1B2C3D4E", "A1B2-C3", "A1B2C3 ", ""],
    },
    device_log_index: POSITIVE_INTEGER,
  },
  // "12-character string, the MAC address of the tracked beacon"
  proximity_band: {
    beacon_id: {
      kind: "pattern",
      accepts: ["A4C138F0E1D2", "000000000000"],
      rejects: ["A4C138F0E1", "A4:C1:38:F0:E1:D2", "A4C138F0E1D2F3", "G4C138F0E1D2"],
    },
  },
};

/** Spec 2.4: cuff-size names and their ranges (cm); the wrist cuff is a lab decision. */
export const CUFF_CM: Record<string, readonly [number, number]> = {
  "Vendor BPM - S": [16, 36],
  "Vendor BPM - Wide Range": [22, 45],
  "Vendor BPM - XL": [40, 52],
  "Vendor BPM - Wrist": [13.5, 21.5],
};

/** Spec 2.4: the one legacy name. */
export const LEGACY_NAMES: Record<string, string> = {
  "Vendor BPM - L": "Vendor BPM - Wide Range",
};

/** Spec 2.8: "Every device type accepts the device property measurement_webhook_id". */
export const DEVICE_PROPERTY = "measurement_webhook_id";
