import { Catalogue } from "../../src/catalogue/catalogue.ts";
import type { Profile } from "../../src/catalogue/schema.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { mappingFor } from "../../src/gatt/mapping.ts";
import type { Inbound } from "../../src/ingest/prepare.ts";
import { encodePayload } from "../../src/mqtt/payload.ts";
import { topicOf } from "../../src/mqtt/topics.ts";
import { cellularUplink, gatewayUplink } from "../../src/mqtt/uplink.ts";
import { generateReadings } from "../../src/readings/generate.ts";
import type { GeneratedReading } from "../../src/readings/generated.ts";
import { PatientModels } from "../../src/readings/patients.ts";
import type { MetricRecord } from "../../src/readings/types.ts";
import { openStore } from "../../src/store/open.ts";
import type { Store } from "../../src/store/store.ts";
import type { MeasurementRow } from "../../src/store/types-ingest.ts";

export const catalogue = Catalogue.load();
export const patients = PatientModels.load();
/** 2026-01-01T00:00:00Z: readings start here; receipt times are later. */
export const T0 = 1_767_225_600_000;
export const RECEIVED = T0 + 60 * 86_400_000;

export async function memoryStore(clock = new VirtualClock({ startMs: RECEIVED })): Promise<{
  store: Store;
  clock: VirtualClock;
}> {
  return { store: await openStore("memory", { clock, rng: new Rng("ingest") }), clock };
}

/** Where a catalogue device sends from: its gateway slot or its IMEI. */
export interface Sender {
  readonly profile: Profile;
  /** Gateway uuid or IMEI. */
  readonly hardwareUuid: string;
  /** Bluetooth address (gateway devices) or the IMEI (dedupe source). */
  readonly source: string;
  readonly sensorId: string | null;
}

/**
 * Activates a sender's device for patient `externalId` of a new account `clinic`, as the API
 * would: the device and the patient its readings are stored for.
 */
export async function activateForPatient(store: Store, sender: Sender, externalId = "P-1") {
  const account = await store.accounts.create({
    clientDomain: "clinic",
    environment: "development",
  });
  const device = await deviceForPatient(store, account.id, sender, externalId);
  return { account, device };
}

/** A new patient `externalId` of the account with the sender's device, Delivered. */
export async function deviceForPatient(
  store: Store,
  accountId: string,
  sender: Sender,
  externalId: string,
) {
  const patient = await store.patients.create(accountId, { externalId });
  return store.devices.create(accountId, {
    name: sender.profile.name,
    sensorCode: sender.profile.sensor_code,
    hardwareUuid: sender.hardwareUuid,
    sensorId: sender.sensorId,
    patientId: patient.id,
    status: "Delivered",
  });
}

/**
 * Activates a direct-cellular sender's device on its IMEI for a new account `clinic` (what fixes
 * a dead letter of an unknown device type, which the replay tests then replay).
 */
export async function activateCellular(store: Store, sender: Sender) {
  const account = await store.accounts.create({
    clientDomain: "clinic",
    environment: "development",
  });
  return store.devices.create(account.id, {
    name: sender.profile.name,
    sensorCode: null,
    hardwareUuid: sender.hardwareUuid,
    sensorId: null,
    status: "Delivered",
  });
}

/** A sender per profile, on its own gateway (or IMEI), ids derived from the profile's index. */
export function senderFor(profile: Profile, index: number): Sender {
  const n = String(index).padStart(2, "0");
  if (profile.connectivity === "cellular") {
    const imei = `3569380356438${n}`;
    return { profile, hardwareUuid: imei, source: imei, sensorId: null };
  }
  return {
    profile,
    hardwareUuid: `A1B2C3D4E0${n}`,
    source: `F011223344${n}`,
    sensorId: profile.sensor_id.required ? `SN${n}AB` : null,
  };
}

export function readingsOf(sender: Sender, days = 10, duplicateRate = 0.05): GeneratedReading[] {
  return generateReadings({
    devices: [sender.profile],
    patient: patients.get(sender.profile.family === "fetal_doppler" ? "pregnancy" : "copd"),
    rng: new Rng(`ingest/${sender.profile.name}`),
    start: T0,
    days,
    duplicateRate,
    ...(sender.sensorId === null
      ? {}
      : { settings: { [sender.profile.name]: { serialNumber: sender.sensorId } } }),
  });
}

/** The topic and payload a gateway or cellular device publishes for some readings. */
export function uplinkMessage(
  sender: Sender,
  messageId: string,
  readings: readonly GeneratedReading[],
  firstSequence = 0,
): { topic: string; payload: Buffer } {
  const mapping = mappingFor(sender.profile);
  const encoded = readings.map((r, i) => ({
    receivedAt: r.timestamp + 30_000,
    sequence: (firstSequence + i) & 0xffff,
    values: mapping.encode(r, sender.profile, (firstSequence + i * 8) & 0xffff),
  }));
  if (sender.profile.connectivity === "cellular") {
    return {
      topic: topicOf("cell/up", sender.hardwareUuid),
      payload: encodePayload(
        "cell/up",
        cellularUplink({
          messageId,
          imei: sender.hardwareUuid,
          deviceType: sender.profile.name,
          sentAt: readings[0]!.timestamp + 60_000,
          readings: encoded,
        }),
      ),
    };
  }
  return {
    topic: topicOf("gw/up", sender.hardwareUuid),
    payload: encodePayload(
      "gw/up",
      gatewayUplink({
        messageId,
        gatewayUuid: sender.hardwareUuid,
        sentAt: readings[0]!.timestamp + 60_000,
        readings: encoded.map((e) => ({
          ...e,
          deviceAddress: sender.source,
          sensorCode: sender.profile.sensor_code!,
          sensorId: sender.sensorId,
        })),
      }),
    ),
  };
}

/** A gateway's check-in as its retained status topic carries it (README "MQTT uplink"). */
export function checkinPayload(signalStrength: number, checkinAt: number): string {
  return JSON.stringify({
    v: 1,
    online: true,
    signal_strength: signalStrength,
    firmware_version: "3.1.0",
    bootloader_version: "1.2.0",
    provisioned: true,
    checkin_at: new Date(checkinAt).toISOString(),
  });
}

export const inbound = (
  m: { topic: string; payload: Uint8Array },
  receivedAt = RECEIVED,
): Inbound => ({
  ...m,
  receivedAt,
});

/** What a stored row says about its record, in the generator's terms. */
export function asRecord(
  row: MeasurementRow,
): MetricRecord & { timestamp: number; timezone_offset: number } {
  return {
    metric: row.metric,
    value_1: row.value1,
    value_2: row.value2,
    filter_params: row.filterParams as MetricRecord["filter_params"],
    timestamp: row.timestamp,
    timezone_offset: row.timezoneOffset,
  };
}

/** The records of generated readings, each once (re-sends dropped), as rows should hold them. */
export function expectedRecords(readings: readonly GeneratedReading[]) {
  return readings
    .filter((r) => !r.duplicate)
    .flatMap((r) =>
      r.records.map((rec) => ({
        ...rec,
        timestamp: r.timestamp,
        timezone_offset: r.timezone_offset,
      })),
    );
}
