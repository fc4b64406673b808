import { EmulatedRadio } from "../../ble/radio.ts";
import type { Profile } from "../../catalogue/schema.ts";
import { CellularDevice } from "../../cellular/device.ts";
import { STEADY_LINK_PROFILE } from "../../cellular/link.ts";
import { type Modem, sessionsBack } from "../../cellular/modem.ts";
import type { StoredReading } from "../../cellular/stored-reading.ts";
import { RpmlabError } from "../../core/errors.ts";
import type { FleetDevice } from "../../devices/fleet-device.ts";
import type { HardwareDeliveredEvent } from "../../fulfilment/events.ts";
import { deviceMacAddress } from "../../fulfilment/identifiers.ts";
import { Gateway, type QueuedReading } from "../../gateway/gateway.ts";
import { generateReadings } from "../../readings/generate.ts";
import type { GeneratedReading } from "../../readings/generated.ts";
import { drawImei } from "../../readings/identity.ts";
import type { Cohort } from "../types.ts";
import type { DeviceRig, FleetDeps, PatientRig } from "./fleet-rigs.ts";
import { HouseholdBle } from "./household-ble.ts";
import { DeviceLedger } from "./ledger.ts";
import { patientAddress } from "./patient-address.ts";
import { cohortPatientModel } from "./patient-model.ts";
import { actionRefused } from "./refused.ts";
import { gatewayDropped, gatewayReturned, retiredUnitHolds, takeOnUnit } from "./unit-readings.ts";

const DAY = 86_400_000;

/**
 * The scenario's patients and their hardware (issue 7 §2): each cohort's patients activated
 * through the HWI API, or their kits ordered and powered on when the lab's fulfilment delivers
 * them; gateways and direct-cellular devices as the lab runs them (src/gateway, src/cellular),
 * BLE devices on the direct path or, with `transports.ble: emulated`, as bleno peripherals and
 * noble gateways on one EmulatedRadio on the run's clock, households out of each other's range;
 * readings from the patient models on the scenario's clock, every
 * one in a ledger (ledger.ts).
 */
export class Fleet {
  readonly patients: PatientRig[] = [];
  /** The run's emulated BLE world (`transports.ble: emulated`), on the run's clock. */
  readonly radio: EmulatedRadio | undefined;
  private readonly stops: (() => Promise<void>)[] = [];
  /** Each cellular unit's stop (once: a replaced unit stops at delivery, the rest at the end). */
  private readonly cellularStops = new Map<CellularDevice, () => Promise<void>>();

  constructor(private readonly deps: FleetDeps) {
    this.radio =
      deps.scenario.transports.ble === "emulated"
        ? new EmulatedRadio(deps.clock, deps.rng.fork("radio"))
        : undefined;
  }

  /** Creates every cohort's patients and activates (or orders) their kits. */
  async enrol(): Promise<void> {
    for (const cohort of this.deps.scenario.cohorts) {
      for (let i = 0; i < cohort.count; i++) await this.enrolPatient(cohort, i);
    }
  }

  rig(cohort: string, index: number): PatientRig {
    const found = this.patients.find((p) => p.cohort.id === cohort && p.index === index);
    if (found === undefined) throw new Error(`no patient ${cohort}[${index}]`);
    return found;
  }

  /**
   * A delivered box: what it puts to use powers on (fulfilment's hardware.delivered). A BLE
   * device powers on only when the event names it (it is with the patient, events.ts) and the
   * patient's gateway is here: a device whose own box is still in the mail waits for it, even
   * when the gateway it joined arrives first. A replacement unit takes over from the unit the
   * patient had, which goes back to the vendor (spec 4.3), as a replaced gateway stops.
   */
  async delivered(event: HardwareDeliveredEvent): Promise<void> {
    const patient = this.patients.find(
      (p) => p.externalId === event.patientExternalId && event.patientExternalId !== null,
    );
    if (patient === undefined || patient.unlinked) return;
    for (const row of event.devices) {
      const device = patient.devices.find((d) => d.hwiDeviceId === row.id);
      if (device === undefined) continue;
      if (event.replacedUnits.includes(row.id)) {
        await this.retire(device);
        // The new unit is with the patient, its gateway here or not: it keeps what it takes
        // until a gateway reads it.
        if (device.profile.connectivity === "gateway") await this.powerBle(patient, device);
      }
      if (device.profile.connectivity === "cellular" && row.hardwareUuid !== null) {
        if (device.cellular === undefined) await this.powerCellular(device, row.hardwareUuid);
      }
    }
    if (event.gatewayUuid === null) return;
    if (patient.gatewayUuid !== event.gatewayUuid) {
      // A new gateway (a first kit or a replacement): the devices move over to it.
      const old = patient.gateway;
      const oldUuid = patient.gatewayUuid;
      patient.gateway = undefined;
      await old?.stop();
      if (old !== undefined) gatewayReturned(old, patient.devices);
      for (const device of patient.devices) {
        if (oldUuid !== undefined) device.ble?.release(oldUuid);
      }
      patient.gatewayUuid = event.gatewayUuid;
    }
    const named = new Set(event.devices.map((row) => row.id));
    for (const device of patient.devices) {
      if (device.profile.connectivity !== "gateway" || device.ble !== undefined) continue;
      if (named.has(device.hwiDeviceId)) await this.powerBle(patient, device);
    }
    if (patient.gateway === undefined) await this.openGateway(patient);
  }

  /**
   * A device's unit powers off for good (replaced, spec 4.3): it takes no more readings, and goes
   * back to the vendor with the readings it still holds (the lab's decision, README "Delivered"),
   * which the ledger counts as returned with the unit, not missing.
   */
  private async retire(device: DeviceRig): Promise<void> {
    const { ble, cellular } = device;
    device.ble = undefined;
    device.cellular = undefined;
    // A flat battery is the old unit's: its replacement comes with a fresh one (as a new
    // CellularDevice starts with its own).
    device.deadUntil = Number.NEGATIVE_INFINITY;
    // Not awaited: a reading under way settles on the run's clock (an indication's ATT timeout).
    const underWay = new Map(device.underWay);
    device.underWay.clear();
    await ble?.close();
    if (ble !== undefined) device.ledger.returned(retiredUnitHolds(ble, underWay));
    if (cellular !== undefined) await this.cellularStops.get(cellular)?.();
    // A cellular reading is in its outbox once taken (CellularDevice.take is synchronous).
    if (cellular !== undefined) device.ledger.returned(cellular.held());
  }

  async stop(): Promise<void> {
    for (const stop of this.stops.splice(0).reverse()) await stop();
    for (const patient of this.patients) await patient.gateway?.stop();
    for (const patient of this.patients) for (const d of patient.devices) await d.ble?.close();
    this.radio?.close();
  }

  /**
   * Lets the network I/O of a clock step finish (acks, reconnects). Every step of the run comes
   * here: only the modems with something under way are awaited.
   */
  async settle(): Promise<void> {
    for (const modem of this.modems()) {
      const connecting = modem.session.settled();
      if (connecting !== undefined) await connecting;
      const sending = modem.drainer.settled();
      if (sending !== undefined) await sending;
    }
  }

  /** After a broker restart or outage: the fleet's sessions are back (cellular/modem.ts). */
  reconnected(wallMs: number): Promise<void> {
    return sessionsBack(this.modems(), wallMs);
  }

  /** A plain loop, not a generator: settle() walks the fleet at every clock step. */
  private modems(): (Modem<QueuedReading> | Modem<StoredReading>)[] {
    const modems: (Modem<QueuedReading> | Modem<StoredReading>)[] = [];
    for (const patient of this.patients) {
      if (patient.gateway !== undefined) modems.push(patient.gateway.modem);
      for (const device of patient.devices) {
        if (device.cellular !== undefined) modems.push(device.cellular.modem);
      }
    }
    return modems;
  }

  /**
   * Readings waiting in gateways' and modems' outboxes, and on devices' own stores for a gateway
   * to read: those the run's drain waits for. An unlinked patient's gateway reads its devices no
   * more (spec 4.2), so what they hold stays there, held at the end, and is not waited for.
   */
  get queued(): number {
    let n = 0;
    for (const patient of this.patients) {
      n += patient.gateway?.stats.outbox.queued ?? 0;
      for (const d of patient.devices) {
        n += d.cellular?.stats.queued ?? 0;
        if (patient.gateway !== undefined && !patient.unlinked) n += d.ble?.waiting ?? 0;
      }
    }
    return n;
  }

  private async enrolPatient(cohort: Cohort, index: number): Promise<void> {
    const { catalogue } = this.deps;
    const domain = this.deps.domains.get(cohort.account)!;
    const externalId = `${cohort.id}-${String(index + 1).padStart(4, "0")}`;
    const own = this.deps.rng.fork(`patient/${cohort.id}/${index}`);
    const patient: PatientRig = {
      cohort,
      index,
      externalId,
      domain,
      devices: [],
      household: new HouseholdBle(this.radio, this.patients.length),
      gatewayUuid: undefined,
      gateway: undefined,
      unlinked: false,
      address: undefined,
    };
    this.patients.push(patient);
    patient.address = patientAddress(own.fork("address"));
    // Spec 2.1/2.4: a patient an activation creates holds only its external_id; the clinic
    // registers the patient with name and address first, so kits can ship to them.
    const created = await this.deps.client.hwi(domain, "POST", "/hwi/hwi-patients/", {
      external_id: externalId,
      name: `Patient ${externalId}`,
      ...patient.address,
    });
    if (created.status !== 201) {
      throw new RpmlabError(
        "E_SCENARIO_FAILED",
        `registering patient ${externalId}: ${created.status} ${JSON.stringify(created.body)}`,
      );
    }
    const ordered = cohort.onboarding === "ordered";
    if (cohort.connectivity === "gateway" && !ordered) {
      patient.gatewayUuid = own.fork("gateway").hex(12);
    }
    for (const name of cohort.kit) {
      await this.addDevice(patient, catalogue.get(name), ordered ? "order" : "activate");
    }
    if (patient.gatewayUuid !== undefined && !ordered) await this.openGateway(patient);
  }

  /**
   * A device of `profile` for the patient, its readings from now to the end of the run: activated
   * on the patient's gateway (or its own IMEI) and powered on, or ordered (it powers on when the
   * lab's fulfilment delivers it).
   */
  async addDevice(patient: PatientRig, profile: Profile, how: "activate" | "order"): Promise<void> {
    const { scenario, client, clock } = this.deps;
    const own = this.deps.rng.fork(`patient/${patient.cohort.id}/${patient.index}`);
    // A second device of a type (one activated later through the API) draws its own streams.
    const nth = patient.devices.filter((d) => d.profile.name === profile.name).length;
    const label = nth === 0 ? profile.name : `${profile.name}/${nth}`;
    const model = cohortPatientModel(
      this.deps.patients.get(patient.cohort.model),
      patient.cohort,
      patient.index,
      scenario.clock.startMs,
    );
    const end = scenario.clock.startMs + scenario.durationMs;
    // Spec 2.4: an inhaler sensor's sensor_id is its serial number, which its readings carry.
    const sensorId = profile.sensor_id.required ? own.fork(`serial/${label}`).hex(8) : undefined;
    const readings = generateReadings({
      ...(sensorId === undefined
        ? {}
        : { settings: { [profile.name]: { serialNumber: sensorId } } }),
      devices: [profile],
      patient: model,
      rng: own.fork(`readings/${label}`),
      start: scenario.clock.startMs,
      days: Math.max(1, Math.ceil(scenario.durationMs / DAY)),
    }).filter((r) => r.timestamp >= clock.now() && r.timestamp < end);
    if (
      how === "activate" &&
      profile.connectivity === "gateway" &&
      patient.gatewayUuid === undefined
    ) {
      // Activating needs the hardware in hand: with no gateway the service would take it for
      // an order (spec 4.1), one the patient's kit already holds a request for.
      throw actionRefused(
        `activating ${profile.name} for ${patient.externalId}: the patient has no gateway yet (the kit is not delivered); order the device instead`,
      );
    }
    const hardwareUuid =
      how === "order"
        ? undefined
        : profile.connectivity === "cellular"
          ? drawImei(own.fork(`imei/${label}`))
          : patient.gatewayUuid;
    const created = await client.hwi<{ id: string }>(patient.domain, "POST", "/hwi/hwi-devices/", {
      device: {
        name: profile.name,
        ...(hardwareUuid === undefined ? {} : { hardware_uuid: hardwareUuid }),
      },
      ...(sensorId === undefined ? {} : { sensor_id: sensorId }),
      patient: { external_id: patient.externalId },
    });
    if (created.status !== 201) {
      const doing = how === "order" ? "ordering" : "activating";
      throw actionRefused(
        `${doing} ${profile.name} for ${patient.externalId}: ${created.status} ${JSON.stringify(created.body)}`,
      );
    }
    const device: DeviceRig = {
      profile,
      serial: sensorId ?? `SN-${created.body.id.slice(0, 8)}`,
      hwiDeviceId: created.body.id,
      ledger: new DeviceLedger(readings),
      ble: undefined,
      underWay: new Map(),
      cellular: undefined,
      deadUntil: Number.NEGATIVE_INFINITY,
    };
    patient.devices.push(device);
    if (hardwareUuid === undefined) return;
    if (profile.connectivity === "cellular") await this.powerCellular(device, hardwareUuid);
    else await this.powerBle(patient, device);
  }

  /** A BLE device of the household, on the run's BLE path: it takes its readings from now on. */
  private async powerBle(patient: PatientRig, device: DeviceRig): Promise<void> {
    const { clock } = this.deps;
    const hardware: FleetDevice = await patient.household.device(
      {
        profile: device.profile,
        clock,
        serial: device.serial,
        address: deviceMacAddress(device.hwiDeviceId),
      },
      patient.devices.indexOf(device),
    );
    device.ble = hardware;
    // A full store drops its oldest reading (RecordStore): never sent, by design.
    hardware.ble.onDropped = (reading) => device.ledger.droppedFull([reading]);
    // A re-emission shares its original's records (readings/duplicates.ts).
    const originals = new Map<GeneratedReading["records"], GeneratedReading>();
    for (const reading of device.ledger.readings) {
      if (reading.timestamp < clock.now()) continue;
      if (!reading.duplicate) originals.set(reading.records, reading);
      clock.schedule(reading.timestamp, () => {
        // A unit replaced since (retire) is back with the vendor: its successor takes it.
        if (device.ble !== hardware) return;
        // Due at the instant a replacement came: the old unit may have taken it just before.
        if (device.ledger.hasTaken(reading)) return;
        if (patient.unlinked || clock.now() < device.deadUntil) return;
        // Sent again unchanged (DESIGN "devices re-send"), stamped as the first time: between
        // the two a gateway may have set the device's clock, and a new stamp is a new reading.
        const original = reading.duplicate ? originals.get(reading.records) : undefined;
        const resentStamp = original === undefined ? undefined : hardware.ble.stampOf(original);
        const outcome = takeOnUnit(device, hardware, reading, resentStamp);
        device.ledger.taken(
          reading,
          outcome.then(() => hardware.ble.stampOf(reading) ?? reading.timestamp),
          outcome.then((o) => o !== "lost"),
        );
      });
    }
  }

  private async powerCellular(device: DeviceRig, imei: string): Promise<void> {
    const { clock, client, rng, brokerUrl } = this.deps;
    const now = clock.now();
    const credentials = await client.credentials("cellular", imei);
    const cellular = await CellularDevice.open({
      profile: device.profile,
      clock,
      rng: rng.fork(`cellular/${imei}`),
      imei,
      // Not one the unit it replaces took at this very instant.
      readings: device.ledger.readings.filter(
        (r) => r.timestamp >= now && !device.ledger.hasTaken(r),
      ),
      // Delivered during a broker outage, it powers on all the same and keeps trying.
      broker: { url: brokerUrl, ...credentials, keepTrying: true },
      link: { profile: STEADY_LINK_PROFILE },
    });
    cellular.events.on("reading", ({ reading, fate }) => {
      device.ledger.taken(reading, reading.timestamp, Promise.resolve(fate !== "lost-by-design"));
    });
    cellular.events.on("dropped", ({ readings }) => device.ledger.droppedFull(readings));
    // Flat in the mail (device.battery_dead before delivery): it arrives flat, as a BLE one does.
    if (device.deadUntil > now) cellular.batteryDead(device.deadUntil - now);
    device.cellular = cellular;
    await cellular.start();
    let stopped: Promise<void> | undefined;
    const stop = () => {
      stopped ??= cellular.stop();
      return stopped;
    };
    this.cellularStops.set(cellular, stop);
    this.stops.push(stop);
  }

  private async openGateway(patient: PatientRig): Promise<void> {
    const { clock, client, rng, catalogue, brokerUrl } = this.deps;
    const uuid = patient.gatewayUuid!;
    const credentials = await client.credentials("gateway", uuid);
    const ble = patient.household.gateway(clock, rng.fork(`ble/${uuid}`), uuid);
    const gateway = await Gateway.open({
      clock,
      rng: rng.fork(`gateway/${uuid}`),
      catalogue,
      gatewayUuid: uuid,
      broker: { url: brokerUrl, ...credentials, keepTrying: true },
      ble,
      link: { profile: STEADY_LINK_PROFILE },
      ...(patient.cohort.checkinEveryMs === undefined
        ? {}
        : { checkinEveryMs: patient.cohort.checkinEveryMs }),
    });
    patient.gateway = gateway;
    gateway.modem.outbox.events.on("dropped", (e) => gatewayDropped(e.entries, patient.devices));
    await gateway.start();
  }
}
