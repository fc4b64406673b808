import type { DirectRadio } from "../devices/direct-device.ts";
import { runSession, type SessionOptions, type SessionResult } from "./ble-session.ts";
import type { HeldDevice } from "./device-rules.ts";
import type { DirectLink } from "./direct-link.ts";

/** What the gateway runtime offers its BLE side (gateway.ts). */
export interface BleHost {
  readonly gatewayUuid: string;
  /** The held device an advertiser is, when the whitelist admits it. */
  admits(address: string, sensorCode: string | undefined): HeldDevice | undefined;
  /** Options of a session with an admitted device (values go to the gateway's assembler). */
  sessionOptions(address: string, sensorCode: string | undefined): SessionOptions;
  /** A session ended, completed or failed. */
  sessionEnded(address: string, outcome: SessionResult | Error): void;
}

/**
 * The gateway's BLE side, chosen by the `--ble` spec: `direct` (DirectBle below: devices in this
 * process, no HCI) or a noble central on an HCI socket (`emulated`, `tcp://…`, `hci:N`,
 * src/app/ble-gateway.ts). Both run the same session (ble-session.ts) and hand raw values to
 * the same gateway logic.
 */
export interface GatewayBle {
  readonly describe: string;
  start(host: BleHost): Promise<void>;
  /** The whitelist changed: released devices go free, newly admitted advertisers get visited. */
  whitelistChanged(released: readonly HeldDevice[]): void;
  stop(): Promise<void>;
}

/**
 * `--ble direct`: the gateway scans a DirectRadio; an admitted advertiser is visited, one device
 * at a time (as a hub's single radio does), through a DirectLink.
 */
export class DirectBle implements GatewayBle {
  readonly describe = "direct";
  private host: BleHost | undefined;
  private stopScan: (() => void) | undefined;
  private queue: Promise<void> = Promise.resolve();
  private readonly queued = new Set<string>();
  private current: DirectLink | undefined;

  constructor(private readonly radio: DirectRadio) {}

  async start(host: BleHost): Promise<void> {
    this.host = host;
    this.stopScan = this.radio.scan((device) => {
      if (this.host === undefined) return false;
      // A visit is already on its way: it takes this reading too. Answering "no gateway" made a
      // device that cannot store lose every reading waiting for that visit (DirectDevice.take).
      if (this.queued.has(device.address)) return true;
      if (host.admits(device.address, device.sensorCode) === undefined) return false;
      this.queued.add(device.address);
      this.queue = this.queue.then(() => this.visit(host, device.address));
      return true;
    });
  }

  whitelistChanged(released: readonly HeldDevice[]): void {
    const host = this.host;
    if (host === undefined) return;
    for (const held of released) this.radio.get(held.mac)?.release(host.gatewayUuid);
    for (const device of this.radio.list()) if (device.wantsGateway) this.radio.advertise(device);
  }

  /** Resolves once the visits queued so far are over. */
  async settled(): Promise<void> {
    await this.queue;
  }

  async stop(): Promise<void> {
    this.stopScan?.();
    this.stopScan = undefined;
    this.host = undefined;
    // A visit waiting on the Clock (its linger) ends now: the link goes down under it.
    await this.current?.disconnect();
    await this.queue;
  }

  private async visit(host: BleHost, address: string): Promise<void> {
    this.queued.delete(address);
    const device = this.radio.get(address);
    if (device === undefined || this.host !== host) return;
    let link: DirectLink | undefined;
    try {
      link = device.connect(host.gatewayUuid);
      this.current = link;
      const result = await runSession(link, host.sessionOptions(link.address, device.sensorCode));
      host.sessionEnded(link.address, result);
    } catch (error) {
      host.sessionEnded(link?.address ?? address, error as Error);
    } finally {
      // A session that failed half-way (a timeout) leaves the link up: end it.
      if (link?.connected === true) await link.disconnect();
      this.current = undefined;
    }
  }
}
