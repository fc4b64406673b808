import { type BitFlags, BitTable } from "../bits.ts";

/**
 * Status fields shared by the PLX characteristics (PLXS v1.0.1; GSS PLX Spot-check Measurement,
 * PLX Continuous Measurement, PLX Features).
 */

/** Measurement Status, uint16: bits 0–4 RFU. */
export const PLX_MEASUREMENT_STATUS = new BitTable({
  measurementOngoing: 5,
  earlyEstimatedData: 6,
  validatedData: 7,
  fullyQualifiedData: 8,
  dataFromMeasurementStorage: 9,
  dataForDemonstration: 10,
  dataForTesting: 11,
  calibrationOngoing: 12,
  measurementUnavailable: 13,
  questionableMeasurementDetected: 14,
  invalidMeasurementDetected: 15,
});
export type PlxMeasurementStatus = BitFlags<(typeof PLX_MEASUREMENT_STATUS.names)[number]>;

/** Device and Sensor Status, uint24: bits 16–23 RFU. */
export const PLX_DEVICE_AND_SENSOR_STATUS = new BitTable({
  extendedDisplayUpdateOngoing: 0,
  equipmentMalfunctionDetected: 1,
  signalProcessingIrregularityDetected: 2,
  inadequateSignalDetected: 3,
  poorSignalDetected: 4,
  lowPerfusionDetected: 5,
  erraticSignalDetected: 6,
  nonpulsatileSignalDetected: 7,
  questionablePulseDetected: 8,
  signalAnalysisOngoing: 9,
  sensorInterferenceDetected: 10,
  sensorUnconnectedToUser: 11,
  unknownSensorConnected: 12,
  sensorDisplaced: 13,
  sensorMalfunctioning: 14,
  sensorDisconnected: 15,
});
export type PlxDeviceAndSensorStatus = BitFlags<
  (typeof PLX_DEVICE_AND_SENSOR_STATUS.names)[number]
>;
