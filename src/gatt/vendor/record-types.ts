/**
 * Record types of the vendor records service: one code per metric (spec 2.8 API format names).
 * Codes are wire values: never renumber or reuse one. Grouped by device family, with room to grow.
 */
export const RECORD_TYPES = {
  // Metrics SIG characteristics also carry, for devices that report them as vendor records.
  weight: 0x01,
  battery_percentage: 0x02,
  spO2: 0x03,
  pulse: 0x04,
  perfusion_index: 0x05,
  blood_pressure: 0x06,
  irregular_heartbeat: 0x07,
  glucose: 0x08,
  // Peak flow meter.
  peak_expiratory_flow: 0x10,
  forced_expiratory_volume: 0x11,
  // Fetal doppler.
  fetal_pulse: 0x18,
  invalid_event: 0x19,
  // Inhaler sensor (low_battery_event is shared with the medication cap).
  inhaler_medication_event: 0x20,
  low_battery_event: 0x21,
  inhaler_turbohaler_rotation_event: 0x22,
  inhaler_respiratory_flow_log: 0x23,
  inhaler_respiratory_timing_log: 0x24,
  inhaler_shake_detection_event: 0x25,
  inhaler_inhaler_installed_event: 0x26,
  inhaler_medication_cap_event: 0x27,
  // Medication cap sensor.
  capsensor_open_close_event: 0x30,
  no_measurement_event: 0x31,
  capsensor_time_updated_event: 0x32,
  capsensor_bluetooth_event: 0x33,
  // Proximity band.
  beacon_proximity_event: 0x38,
  beacon_id_event: 0x39,
} as const satisfies Record<string, number>;

const BY_CODE = new Map<number, string>(
  Object.entries(RECORD_TYPES).map(([metric, code]) => [code, metric]),
);

export function recordTypeOf(metric: string): number | undefined {
  return (RECORD_TYPES as Record<string, number | undefined>)[metric];
}

export function metricOfRecordType(code: number): string | undefined {
  return BY_CODE.get(code);
}
