/** What a scenario's fleet (fleet.ts) is made of: its dependencies, patients and devices. */
import type { Catalogue } from "../../catalogue/catalogue.ts";
import type { Profile } from "../../catalogue/schema.ts";
import type { CellularDevice } from "../../cellular/device.ts";
import type { Rng } from "../../core/rng.ts";
import type { VirtualClock } from "../../core/virtual-clock.ts";
import type { MeasureOutcome } from "../../devices/ble-device.ts";
import type { FleetDevice } from "../../devices/fleet-device.ts";
import type { Gateway } from "../../gateway/gateway.ts";
import type { PatientModels } from "../../readings/patients.ts";
import type { PhysicalReading } from "../../readings/types.ts";
import type { Cohort, Scenario } from "../types.ts";
import type { HouseholdBle } from "./household-ble.ts";
import type { LabClient } from "./lab-client.ts";
import type { DeviceLedger } from "./ledger.ts";
import type { PatientAddress } from "./patient-address.ts";

export interface FleetDeps {
  readonly scenario: Scenario;
  readonly clock: VirtualClock;
  readonly client: LabClient;
  /** The scenario's root stream: every patient and device forks its own from it. */
  readonly rng: Rng;
  readonly catalogue: Catalogue;
  readonly patients: PatientModels;
  /** The broker gateways and devices connect to. */
  readonly brokerUrl: string;
  /** Scenario account id → its client domain. */
  readonly domains: ReadonlyMap<string, string>;
}

/** One device of one patient: its hardware when powered on, and its readings' ledger. */
export interface DeviceRig {
  readonly profile: Profile;
  /** Its serial number (an inhaler sensor's is its sensor_id). */
  readonly serial: string;
  /** Known once activated (a kit ordered: once its request is made). */
  hwiDeviceId: string;
  readonly ledger: DeviceLedger;
  /** A gateway-connected device once powered on, on the run's BLE path. */
  ble: FleetDevice | undefined;
  /** Readings its unit is taking whose outcome is not known yet (unit-readings.ts). */
  readonly underWay: Map<PhysicalReading, Promise<MeasureOutcome>>;
  cellular: CellularDevice | undefined;
  /** Its unit's battery is dead until this time (no readings taken); a new unit's is not. */
  deadUntil: number;
}

/** One patient of a cohort with the kit: a gateway and BLE devices, or cellular devices. */
export interface PatientRig {
  readonly cohort: Cohort;
  readonly index: number;
  readonly externalId: string;
  readonly domain: string;
  readonly devices: DeviceRig[];
  /** Its household's BLE: direct, or a place on the run's emulated radio. */
  readonly household: HouseholdBle;
  gatewayUuid: string | undefined;
  gateway: Gateway | undefined;
  /** Unlinked (unenrolled): the patient takes no more readings. */
  unlinked: boolean;
  /** Where the patient lives (shipments, replacements). */
  address: PatientAddress | undefined;
}
