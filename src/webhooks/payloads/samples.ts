import { MS_PER_MINUTE } from "../../core/time.ts";
import { fulfilmentWebhookBody } from "../../fulfilment/events.ts";
import type { DeviceRow, PatientRow } from "../../store/types.ts";
import type { MeasurementRow, WebhookEvent, WebhookRow } from "../../store/types-ingest.ts";
import { measurementWebhookRecord } from "./measurement.ts";
import { patientWebhookBody } from "./patient.ts";
import { specialOrderWebhookBody } from "./special-order.ts";

/** wire-formats: "Dashboard test webhooks use the fixed device id". */
export const TEST_DEVICE_ID = "12345678-abcd-1234-abcd-1234567890ab";
const PATIENT_ID = "TEST-PATIENT";
const GATEWAY = "000000000000";
const DEVICE_NAME = "Vendor BPM - Wide Range";

/**
 * The body of a test send, of the webhook's kind, about the fixed test device: a blood pressure
 * reading taken on the current minute (its records as an array when the webhook posts arrays,
 * else the blood_pressure record; battery left out when the account omits status metrics), a
 * Dropshipped fulfilment, a shipped replacement order, an updated patient.
 */
/**
 * The log's keys of a test send, as a real delivery of its kind is keyed (outbox.ts): the test
 * device (not on a patient webhook, whose body names no device) and the test patient, so the
 * log's hwi_device_id and patient_id filters find test sends too.
 */
export function testDeliveryKeys(event: WebhookEvent): {
  readonly hwiDeviceId: string | null;
  readonly patientId: string;
} {
  return { hwiDeviceId: event === "PATIENT" ? null : TEST_DEVICE_ID, patientId: PATIENT_ID };
}

export function testBody(webhook: WebhookRow, now: number, omitStatusMetrics: boolean): unknown {
  const at = Math.floor(now / MS_PER_MINUTE) * MS_PER_MINUTE;
  switch (webhook.event as WebhookEvent) {
    case "MEASUREMENT": {
      const records = sampleReading(at)
        .filter((row) => !(omitStatusMetrics && row.metric === "battery_percentage"))
        .map((row) => measurementWebhookRecord(row));
      return webhook.postAsArray ? records : records[0];
    }
    case "FULFILLMENT":
      return fulfilmentWebhookBody({
        accountId: webhook.accountId,
        device: sampleDevice(webhook.accountId, at),
        patientExternalId: PATIENT_ID,
        status: "Dropshipped",
        previousHardwareUuid: null,
        reason: null,
        trackingLink: "https://tracking.example/TEST",
        at,
      });
    case "SPECIAL_ORDER":
      return specialOrderWebhookBody(
        {
          accountId: webhook.accountId,
          status: "Dropshipped",
          at,
          replacement: {
            id: "00000000-0000-4000-8000-000000000000",
            accountId: webhook.accountId,
            deviceId: TEST_DEVICE_ID,
            deviceTypes: [DEVICE_NAME],
            shippingName: "Test Patient",
            shippingAddress: "1 Test Street",
            shippingCity: "Irvine",
            shippingState: "CA",
            shippingZipCode: "92614",
            notifyEmails: null,
            previousHardwareUuid: GATEWAY,
            newHardwareUuid: null,
            status: "Dropshipped",
            shippedOn: at,
            deliveredOn: null,
            trackingLink: "https://tracking.example/TEST",
            created: at,
            modified: at,
          },
        },
        PATIENT_ID,
      );
    case "PATIENT":
      return patientWebhookBody("updated", samplePatient(webhook.accountId, at), at);
  }
}

function sampleReading(at: number): MeasurementRow[] {
  const row = (metric: string, value1: number, value2: number | null): MeasurementRow => ({
    id: 0,
    accountId: null,
    deviceId: TEST_DEVICE_ID,
    deviceName: DEVICE_NAME,
    patientExternalId: PATIENT_ID,
    source: "C0FFEE000000",
    hardwareUuid: GATEWAY,
    sensorCode: "10",
    sensorId: null,
    metric,
    value1,
    value2,
    timestamp: at,
    timezoneOffset: 0,
    estimatedTimestamp: false,
    filterParams: { measurement_index: 1 },
    measurementIndex: 1,
    deviceLogIndex: null,
    messageId: null,
    characteristicUuid: null,
    raw: null,
    created: at,
  });
  return [
    row("blood_pressure", 120, 80),
    row("pulse", 72, null),
    row("battery_percentage", 90, null),
  ];
}

function sampleDevice(accountId: string, at: number): DeviceRow {
  return {
    id: TEST_DEVICE_ID,
    accountId,
    name: DEVICE_NAME,
    sensorCode: "10",
    hardwareUuid: GATEWAY,
    sensorId: null,
    patientId: null,
    status: "Dropshipped",
    requireSignature: false,
    shipGatewayOnly: false,
    metaData: null,
    created: at,
    modified: at,
  };
}

function samplePatient(accountId: string, at: number): PatientRow {
  return {
    id: 0,
    accountId,
    externalId: PATIENT_ID,
    name: "Test Patient",
    address: "1 Test Street",
    city: "Irvine",
    state: "CA",
    zipCode: "92614",
    phoneNumber: null,
    email: null,
    physician: null,
    clinicName: null,
    careManager: null,
    smsOptIn: true,
    confirmAddress: false,
    addressStatus: "Verified",
    addressVerifiedBy: "internal",
    created: at,
    modified: at,
  };
}
