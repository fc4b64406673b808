import { type HciBackend, openHciBackend } from "../ble/backend.ts";
import { BtsnoopWriter, fileSink } from "../ble/btsnoop.ts";
import { NobleCentral } from "../ble/hosts/central.ts";
import { EmulatedRadio } from "../ble/radio.ts";
import type { BleSpec } from "../config/ble-spec.ts";
import { SystemClock } from "../core/clock.ts";
import { Rng } from "../core/rng.ts";
import { sensorCodeOf } from "../devices/advertising-data.ts";
import { runSession } from "../gateway/ble-session.ts";
import type { RawCharacteristicValue } from "../gateway/raw-values.ts";
import { admitted, type WhitelistEntry } from "../gateway/whitelist.ts";

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
 * `rpmlab gateway --ble SPEC`: the gateway's BLE side on its own: scan, connect to whitelisted
 * devices, run a session with each (time, subscriptions, RACP since the last sequence), print
 * the raw values. A real standard cuff (service 0x1810) works the same as a virtual one.
 */
export class GatewayApp {
  private stopped = false;
  private central: NobleCentral | undefined;

  private constructor(
    private readonly clock: SystemClock,
    private readonly backend: HciBackend,
    private readonly radio: EmulatedRadio | undefined,
    private readonly capture: BtsnoopWriter | undefined,
  ) {}

  static async start(options: GatewayAppOptions): Promise<GatewayApp> {
    const clock = new SystemClock();
    const radio =
      options.ble.kind === "emulated" ? new EmulatedRadio(clock, new Rng(options.seed)) : undefined;
    const backend = await openHciBackend(options.ble, "gateway", radio);
    const capture =
      options.btsnoop !== undefined && backend.tap !== undefined
        ? new BtsnoopWriter(fileSink(options.btsnoop), () => clock.now())
        : undefined;
    if (capture !== undefined && backend.tap !== undefined) capture.add(backend.tap);
    const central = await NobleCentral.open(backend.factory);
    const app = new GatewayApp(clock, backend, radio, capture);
    app.central = central;
    void app.loop(central, options);
    return app;
  }

  private async loop(central: NobleCentral, options: GatewayAppOptions): Promise<void> {
    const lastSequence = new Map<string, number>();
    const lastVisit = new Map<string, number>();
    while (!this.stopped) {
      const found = await new Promise<
        { id: string; address: string; code: string | undefined } | undefined
      >((resolve) => {
        let stop: (() => Promise<void>) | undefined;
        let done = false;
        void central
          .startScan(
            [],
            (adv) => {
              const code = sensorCodeOf(adv.manufacturerData);
              const since =
                this.clock.now() - (lastVisit.get(adv.address) ?? Number.NEGATIVE_INFINITY);
              if (
                done ||
                !adv.connectable ||
                since < options.revisitMs ||
                !admitted(options.whitelist, adv.address, code)
              )
                return;
              done = true;
              void stop?.().then(() => resolve({ id: adv.id, address: adv.address, code }));
            },
            true,
          )
          .then((s) => {
            stop = s;
            if (done) void s();
          });
      });
      if (found === undefined || this.stopped) return;
      lastVisit.set(found.address, this.clock.now());
      try {
        const link = await central.connect(found.id);
        const result = await runSession(link, {
          clock: this.clock,
          sensorCode: found.code,
          lastSequence: lastSequence.get(found.address),
          lingerMs: options.lingerMs,
          onValue: options.onValue,
        });
        if (result.lastSequence !== undefined) lastSequence.set(found.address, result.lastSequence);
        options.onEvent({ event: "session", address: found.address, ...result });
      } catch (error) {
        options.onEvent({
          event: "session-failed",
          address: found.address,
          error: (error as Error).message,
        });
      }
    }
  }

  stop(): void {
    this.stopped = true;
    this.capture?.close();
    this.central?.quiesce();
    this.backend.close();
    this.radio?.close();
    this.clock.dispose();
  }
}
