import { type HciBackend, openHciBackend } from "../ble/backend.ts";
import { BtsnoopWriter, fileSink } from "../ble/btsnoop.ts";
import { type CentralLink, NobleCentral } from "../ble/hosts/central.ts";
import type { Position } from "../ble/medium/path-loss.ts";
import { EmulatedRadio } from "../ble/radio.ts";
import type { BleSpec } from "../config/ble-spec.ts";
import { type Clock, SystemClock } from "../core/clock.ts";
import { Rng } from "../core/rng.ts";
import { sensorCodeOf } from "../devices/advertising-data.ts";
import { runSession } from "../gateway/ble-session.ts";
import type { BleHost, GatewayBle } from "../gateway/gateway-ble.ts";
import type { RawCharacteristicValue } from "../gateway/raw-values.ts";
import { macOf } from "../gateway/reading-assembler.ts";
import { admitted, type WhitelistEntry } from "../gateway/whitelist.ts";

/** An advertiser the central cannot reach within this (gone quiet, moved away) is given up. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * The gateway's BLE side over an HCI socket (`emulated`, `tcp://…`, `hci:N`): an unmodified
 * noble central scans, and each advertiser the host admits is visited — connect, the session of
 * ble-session.ts, disconnect — no sooner than `revisitMs` after its last visit. A real standard
 * cuff (service 0x1810) works the same as a virtual one.
 */
export class NobleBle implements GatewayBle {
  readonly describe: string;
  private stopped = false;
  private central: NobleCentral | undefined;
  private backend: HciBackend | undefined;
  private ownRadio: EmulatedRadio | undefined;
  private capture: BtsnoopWriter | undefined;

  constructor(
    private readonly spec: BleSpec,
    private readonly clock: Clock,
    private readonly rng: Rng,
    private readonly options: {
      readonly btsnoop?: string | undefined;
      readonly revisitMs?: number;
      /** `emulated`: a medium shared with devices in this process (default: a medium of its own). */
      readonly radio?: EmulatedRadio;
      /** `emulated`: its controller's name (seeds its address; default "gateway") and place. */
      readonly name?: string;
      readonly position?: Position;
    } = {},
  ) {
    this.describe = spec.kind === "tcp" ? `tcp://${spec.host}:${spec.port}` : spec.kind;
  }

  async start(host: BleHost): Promise<void> {
    const { spec, clock } = this;
    if (spec.kind === "emulated" && this.options.radio === undefined) {
      this.ownRadio = new EmulatedRadio(clock, this.rng);
    }
    this.backend = await openHciBackend(spec, this.options.name ?? "gateway", {
      radio: this.options.radio ?? this.ownRadio,
      position: this.options.position,
    });
    if (this.options.btsnoop !== undefined && this.backend.tap !== undefined) {
      this.capture = new BtsnoopWriter(fileSink(this.options.btsnoop), () => clock.now());
      this.capture.add(this.backend.tap);
    }
    this.central = await NobleCentral.open(this.backend.factory, clock);
    void this.loop(this.central, host);
  }

  /** Resolves with the error when its controller (tcp://) goes away; else never. */
  get lost(): Promise<Error> {
    return this.backend?.lost ?? new Promise(() => undefined);
  }

  /** Scanning asks the host on each advertisement, so nothing is kept to update. */
  whitelistChanged(): void {}

  async stop(): Promise<void> {
    this.stopped = true;
    try {
      // Throws when the capture could not be written (btsnoop.ts); the rest still stops.
      this.capture?.close();
    } finally {
      this.central?.quiesce();
      this.backend?.close();
      this.ownRadio?.close();
    }
  }

  private async loop(central: NobleCentral, host: BleHost): Promise<void> {
    const lastVisit = new Map<string, number>();
    const revisitMs = this.options.revisitMs ?? 60_000;
    while (!this.stopped) {
      const found = await new Promise<{ id: string; address: string; code: string | undefined }>(
        (resolve) => {
          let stop: (() => Promise<void>) | undefined;
          let done = false;
          void central
            .startScan(
              [],
              (adv) => {
                const code = sensorCodeOf(adv.manufacturerData);
                const since =
                  this.clock.now() - (lastVisit.get(adv.address) ?? Number.NEGATIVE_INFINITY);
                if (done || !adv.connectable || since < revisitMs) return;
                if (host.admits(adv.address, code) === undefined) return;
                done = true;
                void stop?.().then(() => resolve({ id: adv.id, address: adv.address, code }));
              },
              true,
            )
            .then((s) => {
              stop = s;
              if (done) void s();
            });
        },
      );
      if (this.stopped) return;
      lastVisit.set(found.address, this.clock.now());
      let link: CentralLink | undefined;
      try {
        link = await central.connect(found.id, { clock: this.clock, ms: CONNECT_TIMEOUT_MS });
        host.sessionEnded(
          found.address,
          await runSession(link, host.sessionOptions(found.address, found.code)),
        );
      } catch (error) {
        host.sessionEnded(found.address, error as Error);
      } finally {
        // A session that failed half-way (a timeout) leaves the link up: end it, or the device
        // stays connected to a gateway that no longer talks to it (as DirectBle does).
        if (link?.connected === true) await link.disconnect().catch(() => undefined);
      }
    }
  }
}

export interface GatewayAppOptions {
  ble: BleSpec;
  whitelist: WhitelistEntry[];
  lingerMs: number;
  /** A device is visited again no sooner than this, ms. */
  revisitMs: number;
  seed: string;
  btsnoop?: string | undefined;
  onValue: (value: RawCharacteristicValue) => void;
  onEvent: (event: Record<string, unknown>) => void;
}

/**
 * `rpmlab gateway --ble SPEC` without a broker: the gateway's BLE side on its own, whitelisted
 * by flags, printing the raw values of each visit.
 */
export class GatewayApp {
  private constructor(
    private readonly clock: SystemClock,
    private readonly ble: NobleBle,
  ) {}

  static async start(options: GatewayAppOptions): Promise<GatewayApp> {
    const clock = new SystemClock();
    const ble = new NobleBle(options.ble, clock, new Rng(options.seed), {
      btsnoop: options.btsnoop,
      revisitMs: options.revisitMs,
    });
    const lastSequence = new Map<string, number>();
    const host: BleHost = {
      gatewayUuid: "000000000000",
      admits: (address, sensorCode) =>
        admitted(options.whitelist, address, sensorCode)
          ? { mac: macOf(address), sensorCode: sensorCode ?? "", sensorId: null }
          : undefined,
      sessionOptions: (address, sensorCode) => ({
        clock,
        sensorCode,
        lastSequence: lastSequence.get(address),
        lingerMs: options.lingerMs,
        onValue: options.onValue,
      }),
      sessionEnded: (address, outcome) => {
        if (outcome instanceof Error) {
          options.onEvent({ event: "session-failed", address, error: outcome.message });
          return;
        }
        if (outcome.lastSequence !== undefined) lastSequence.set(address, outcome.lastSequence);
        options.onEvent({ event: "session", address, ...outcome });
      },
    };
    try {
      await ble.start(host);
    } catch (error) {
      await ble.stop();
      clock.dispose();
      throw error;
    }
    return new GatewayApp(clock, ble);
  }

  /** Resolves with the error when its controller (tcp://) goes away; else never. */
  get lost(): Promise<Error> {
    return this.ble.lost;
  }

  async stop(): Promise<void> {
    try {
      await this.ble.stop();
    } finally {
      this.clock.dispose();
    }
  }
}
