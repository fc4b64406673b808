import { Catalogue } from "../catalogue/catalogue.ts";
import type { Profile } from "../catalogue/schema.ts";
import { outboxDirectory } from "../cellular/outbox.ts";
import type { AdminTarget } from "../config/admin-target.ts";
import type { BleSpec } from "../config/ble-spec.ts";
import type { Clock, TimerHandle } from "../core/clock.ts";
import { SystemClock } from "../core/clock.ts";
import { Rng } from "../core/rng.ts";
import { DirectDevice, DirectRadio } from "../devices/direct-device.ts";
import type { HeldDevice } from "../gateway/device-rules.ts";
import { Gateway } from "../gateway/gateway.ts";
import { DirectBle, type GatewayBle } from "../gateway/gateway-ble.ts";
import { generateReadings } from "../readings/generate.ts";
import type { GeneratedReading } from "../readings/generated.ts";
import { PatientModels } from "../readings/patients.ts";
import { AdminClient } from "./admin-client.ts";
import { NobleBle } from "./ble-gateway.ts";

export interface GatewayRunOptions {
  /** Broker URL, e.g. the mqtt_url `rpmlab serve` printed. */
  readonly broker: string;
  /** `direct`: virtual devices in this process; otherwise a noble central on that transport. */
  readonly ble: BleSpec | { readonly kind: "direct" };
  readonly gatewayUuid?: string | undefined;
  /** The gateway's MQTT credentials, or the lab admin API that issues them. */
  readonly credentials:
    | { readonly username: string; readonly password: string }
    | { readonly admin: AdminTarget };
  readonly outboxDir?: string | undefined;
  readonly seed: string;
  /** `--ble direct`: each simulated device takes a reading this often (ms); 0: never. */
  readonly everyMs: number;
  readonly lingerMs: number;
  /** How often the gateway checks in (ms; inCheckinRange); default every 15 minutes. */
  readonly checkinEveryMs?: number | undefined;
  /** Over HCI: a device is visited again no sooner than this (ms); its traffic captured. */
  readonly revisitMs?: number;
  readonly btsnoop?: string | undefined;
  readonly onEvent: (event: Record<string, unknown>) => void;
  /** Default: the system clock (disposed at stop). */
  readonly clock?: Clock;
  /** Gives up the start (a broker yet to answer the CONNACK): start() rejects with its reason. */
  readonly signal?: AbortSignal;
}

/**
 * `rpmlab gateway --broker URL`: one simulated cellular gateway against a running `rpmlab serve`
 * (or any broker speaking the lab's topics). With `--ble direct` it also plays the devices: for
 * each device the service whitelists on it, a virtual device of that sensor code at that
 * address, taking a reading every `--every` seconds — a whole household from one command.
 */
export class GatewayRun {
  private readonly timers = new Map<string, TimerHandle>();
  private readonly devices = new Map<string, DirectDevice>();

  private constructor(
    readonly gateway: Gateway,
    private readonly clock: Clock,
    private readonly ownClock: SystemClock | undefined,
    private readonly radio: DirectRadio | undefined,
    private readonly options: GatewayRunOptions,
    private readonly catalogue: Catalogue,
    private readonly noble: NobleBle | undefined,
  ) {}

  /** Resolves with the error when its controller (tcp://) goes away; else never. */
  get lost(): Promise<Error> {
    return this.noble?.lost ?? new Promise(() => undefined);
  }

  static async start(options: GatewayRunOptions): Promise<GatewayRun> {
    const ownClock = options.clock === undefined ? new SystemClock() : undefined;
    const clock = options.clock ?? ownClock!;
    const catalogue = Catalogue.load();
    const rng = new Rng(options.seed);
    const gatewayUuid = options.gatewayUuid?.replaceAll("-", "").toUpperCase();
    const radio = options.ble.kind === "direct" ? new DirectRadio() : undefined;
    const ble: GatewayBle =
      radio !== undefined
        ? new DirectBle(radio)
        : new NobleBle(options.ble as BleSpec, clock, rng.fork("ble"), {
            btsnoop: options.btsnoop,
            ...(options.revisitMs === undefined ? {} : { revisitMs: options.revisitMs }),
          });
    let gateway: Gateway | undefined;
    try {
      // Before the serve is asked for credentials: asking rotates the gateway's password, which
      // a gateway that then cannot keep its outbox would have changed for nothing.
      if (options.outboxDir !== undefined) outboxDirectory(options.outboxDir);
      const credentials = await credentialsFor(options, gatewayUuid, rng);
      gateway = await Gateway.open({
        clock,
        // Per gateway: two gateways of one seed are two modems (IMEI, ICCID, firmware).
        rng: rng.fork(`gateway/${credentials.username}`),
        catalogue,
        gatewayUuid: credentials.username,
        broker: { url: options.broker, ...credentials },
        ble,
        outbox: options.outboxDir === undefined ? {} : { dir: options.outboxDir },
        lingerMs: options.lingerMs,
        ...(options.checkinEveryMs === undefined ? {} : { checkinEveryMs: options.checkinEveryMs }),
      });
      const run = new GatewayRun(
        gateway,
        clock,
        ownClock,
        radio,
        options,
        catalogue,
        ble instanceof NobleBle ? ble : undefined,
      );
      run.follow();
      await gateway.start(options.signal);
      options.onEvent({
        event: "started",
        gateway_uuid: gateway.uuid,
        imei: gateway.modem.identity.imei,
        iccid: gateway.modem.identity.iccid,
        firmware_version: gateway.modem.identity.firmwareVersion,
        ble: ble.describe,
      });
      if (radio !== undefined) for (const held of gateway.rules.list()) run.simulate(held);
      return run;
    } catch (error) {
      await gateway?.stop();
      ownClock?.dispose();
      throw error;
    }
  }

  async stop(): Promise<void> {
    for (const timer of this.timers.values()) this.clock.clearTimeout(timer);
    this.timers.clear();
    try {
      await this.gateway.stop();
    } finally {
      this.ownClock?.dispose();
    }
  }

  private follow(): void {
    const { gateway, options } = this;
    const out = options.onEvent;
    gateway.events.on("whitelist", ({ added, removed, refused }) => {
      out({ event: "whitelist", held: gateway.rules.report(), added, removed, refused });
      if (this.radio === undefined) return;
      for (const held of removed) this.forget(held.mac);
      for (const held of added) this.simulate(held);
    });
    gateway.events.on("checkin", ({ signal }) => out({ event: "checkin", signal }));
    gateway.events.on("readingNotQueued", ({ address, error }) =>
      out({ event: "reading_not_queued", address, error: error.message }),
    );
    gateway.events.on("stateNotSaved", ({ error }) =>
      out({ event: "state_not_saved", error: error.message }),
    );
    gateway.events.on("downlinkRefused", ({ error }) =>
      out({ event: "downlink_refused", field: error.details.field, error: error.message }),
    );
    gateway.events.on("session", ({ address, result, error }) =>
      out({ event: "session", address, ...(error === null ? { result } : { error }) }),
    );
    gateway.events.on("reading", ({ reading }) =>
      out({
        event: "reading",
        device_address: reading.deviceAddress,
        sensor_code: reading.sensorCode,
        values: reading.values.length,
        clock_unset: reading.clockUnset,
        queued: gateway.stats.outbox.queued,
      }),
    );
    gateway.modem.drainer.events.on("sent", ({ messageId, items }) =>
      out({ event: "sent", message_id: messageId, readings: items }),
    );
    gateway.modem.link.events.on("change", ({ up, cause, signal }) =>
      out({ event: "link", up, cause, signal }),
    );
    // A reconnection the broker refuses (the password rotated by another issue of credentials)
    // is retried on and on: said each time, or the gateway looked merely quiet.
    gateway.modem.session.events.on("connectFailed", (error) =>
      out({ event: "connect_failed", ...errorFields(error) }),
    );
    gateway.modem.outbox.events.on("setAside", ({ seq, error }) =>
      out({
        event: "set_aside",
        seq,
        code: error.code,
        field: error.details.field,
        error: error.message,
      }),
    );
  }

  /** `--ble direct`: a virtual device for a whitelisted entry, taking readings on a timer. */
  private simulate(held: HeldDevice): void {
    const radio = this.radio;
    if (radio === undefined || this.devices.has(held.mac)) return;
    const profile = this.catalogue
      .withSensorCode(held.sensorCode)
      .find((p) => p.connectivity === "gateway");
    if (profile === undefined) return;
    // The physical device's counter does not restart with this process: after a restart on the
    // gateway's state (--outbox) it goes on from the last record relayed, which is where the
    // gateway's RACP request starts (it asks for the records after it). Its readings go on too.
    const lastSequence = this.gateway.lastSequenceOf(held.mac);
    const device = new DirectDevice(
      {
        profile,
        clock: this.clock,
        serial: held.sensorId ?? `SN${held.mac.slice(-6)}`,
        address: held.mac,
        lastSequence,
      },
      radio,
    );
    this.devices.set(held.mac, device);
    this.options.onEvent({ event: "device", address: held.mac, profile: profile.name });
    if (this.options.everyMs <= 0) return;
    const readings = readingsFor(
      profile,
      held,
      this.clock.now(),
      lastSequence === undefined ? this.options.seed : `${this.options.seed}/after-${lastSequence}`,
    );
    let next = 0;
    const tick = () => {
      const reading = readings[next++ % readings.length]!;
      void device
        .take(reading)
        .then((outcome) => this.options.onEvent({ event: "measured", address: held.mac, outcome }));
      this.timers.set(held.mac, this.clock.setTimeout(tick, this.options.everyMs));
    };
    this.timers.set(held.mac, this.clock.setTimeout(tick, this.options.everyMs));
  }

  private forget(mac: string): void {
    const timer = this.timers.get(mac);
    if (timer !== undefined) this.clock.clearTimeout(timer);
    this.timers.delete(mac);
    this.devices.get(mac)?.setInRange(false);
    this.devices.delete(mac);
  }
}

/** A month of the device's readings (values only: the device stamps them with its own clock). */
function readingsFor(
  profile: Profile,
  held: HeldDevice,
  start: number,
  seed: string,
): GeneratedReading[] {
  const patients = PatientModels.load();
  const model = profile.family === "fetal_doppler" ? "pregnancy" : "normal";
  return generateReadings({
    devices: [profile],
    patient: patients.get(model),
    rng: new Rng(`${seed}/${held.mac}`),
    start,
    days: 30,
    duplicateRate: 0,
    ...(held.sensorId === null
      ? {}
      : { settings: { [profile.name]: { serialNumber: held.sensorId } } }),
  }).filter((r) => !r.duplicate);
}

async function credentialsFor(
  options: GatewayRunOptions,
  gatewayUuid: string | undefined,
  rng: Rng,
): Promise<{ username: string; password: string }> {
  if ("username" in options.credentials) return options.credentials;
  const username = gatewayUuid ?? rng.fork("gateway").fork("uuid").hex(12).toUpperCase();
  return new AdminClient(options.credentials.admin).post("mqtt-credentials/", {
    role: "gateway",
    username,
  });
}

/** An error as an event line's fields: its code when it has one, and its message. */
function errorFields(error: Error): { code?: string; error: string } {
  const code = (error as { code?: unknown }).code;
  return { ...(typeof code === "string" ? { code } : {}), error: error.message };
}
