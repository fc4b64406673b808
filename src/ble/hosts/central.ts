import type NobleModule from "@abandonware/noble";
import type { Characteristic, Peripheral, Service } from "@abandonware/noble";
import type { Clock, TimerHandle } from "../../core/clock.ts";
import { RpmlabError } from "../../core/errors.ts";
import { guardGattClient } from "./att-client-guard.ts";
import { watchDiscoveryFaults } from "./att-discovery-guard.ts";
import { AttError } from "./att-errors.ts";
import { loadNoble, type SocketFactory, stopDevUpPoll, withoutProcessHooks } from "./load.ts";
import { timeSmpOn } from "./smp-timer.ts";

type Noble = typeof NobleModule;

/** What a scan saw of one advertiser. */
export interface Advertisement {
  /** Stable id noble gives the peripheral (its address without colons). */
  id: string;
  address: string;
  rssi: number;
  localName: string | undefined;
  serviceUuids: string[];
  connectable: boolean;
  /** Manufacturer Specific Data (company identifier first), when advertised. */
  manufacturerData: Buffer | undefined;
}

/** 16-bit SIG UUIDs as the lab spells them ("2A35"); 128-bit ones lower-case with dashes. */
export function labUuid(nobleUuid: string): string {
  const u = nobleUuid.toLowerCase().replaceAll("-", "");
  if (u.length === 4) return u.toUpperCase();
  return `${u.slice(0, 8)}-${u.slice(8, 12)}-${u.slice(12, 16)}-${u.slice(16, 20)}-${u.slice(20)}`;
}

const bare = (uuid: string): string => uuid.replaceAll("-", "").toLowerCase();

/**
 * A GATT client and scanner on an unmodified noble instance. The gateway (src/gateway) drives it
 * through this class alone; timeouts and queueing are the gateway's.
 */
export class NobleCentral {
  private readonly peripherals = new Map<string, Peripheral>();

  private constructor(private readonly noble: Noble) {
    noble.on("discover", (p: Peripheral) => this.peripherals.set(p.id, p));
  }

  /**
   * Loads a fresh noble on the given sockets and waits for poweredOn. `clock` times what noble
   * leaves untimed on its links (the SMP timeout, smp-timer.ts).
   */
  static open(factory: SocketFactory, clock: Clock): Promise<NobleCentral> {
    // Before noble is made: its constructor binds the write handler the guard passes errors on by.
    guardGattClient();
    const noble = loadNoble(factory) as Noble;
    const hci = (noble as unknown as { _bindings?: { _hci?: object } })._bindings?._hci;
    if (hci !== undefined) timeSmpOn(hci, clock);
    return new Promise((resolve, reject) => {
      withoutProcessHooks(() =>
        noble.on("stateChange", (state: string) => {
          if (state === "poweredOn") resolve(new NobleCentral(noble));
          else if (state === "unsupported" || state === "unauthorized") {
            // Nothing will use this host: its poll must not hold the process (rpmlab device
            // and gateway would print the error and never exit).
            stopDevUpPoll(noble);
            reject(new RpmlabError("E_BLE_HOST", `noble: adapter is ${state}`));
          }
        }),
      );
    });
  }

  get address(): string {
    return (this.noble as unknown as { address: string }).address;
  }

  /** Active scan; `onAdvertisement` sees each advertiser (once unless duplicates are allowed). */
  async startScan(
    serviceUuids: readonly string[],
    onAdvertisement: (adv: Advertisement) => void,
    allowDuplicates = false,
  ): Promise<() => Promise<void>> {
    const listener = (p: Peripheral): void =>
      onAdvertisement({
        id: p.id,
        address: p.address,
        rssi: p.rssi,
        localName: p.advertisement.localName,
        serviceUuids: (p.advertisement.serviceUuids ?? []).map(labUuid),
        connectable: p.connectable,
        manufacturerData: p.advertisement.manufacturerData ?? undefined,
      });
    this.noble.on("discover", listener);
    await this.noble.startScanningAsync(serviceUuids.map(bare), allowDuplicates);
    return async () => {
      this.noble.removeListener("discover", listener);
      await this.noble.stopScanningAsync();
    };
  }

  /**
   * Stops the host's 1-second adapter poll, which neither stack can stop (DESIGN.md): with the
   * poll method of its Hci instance replaced, the chain ends at its next tick, so a process
   * whose transport is closed can exit. In tests, run hosts in workers and terminate them.
   */
  quiesce(): void {
    stopDevUpPoll(this.noble);
  }

  /**
   * Connects to a peripheral a scan has seen. With `deadline`, an initiator that has not met the
   * peripheral's advertising within `ms` on `clock` is cancelled (LE Create Connection Cancel,
   * Vol 4 Part E §7.8.13): noble alone would wait for ever for a device that went quiet or away.
   */
  async connect(id: string, deadline?: { clock: Clock; ms: number }): Promise<CentralLink> {
    const p = this.peripherals.get(id);
    if (p === undefined)
      throw new RpmlabError("E_BLE_GATT", `no advertiser ${id} has been seen by this scanner`);
    const connecting = p.connectAsync();
    if (deadline === undefined) {
      await connecting;
      return new CentralLink(p);
    }
    connecting.catch(() => undefined);
    const { clock, ms } = deadline;
    let timer: TimerHandle | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = clock.setTimeout(() => {
        // First: noble rejects its own attempt with "connection canceled!" on the cancel.
        reject(new RpmlabError("E_BLE_GATT", `${p.address}: no connection within ${ms} ms`));
        p.cancelConnect();
      }, ms);
    });
    timedOut.catch(() => undefined);
    try {
      await Promise.race([connecting, timedOut]);
    } finally {
      if (timer !== undefined) clock.clearTimeout(timer);
    }
    return new CentralLink(p);
  }
}

/**
 * Every service and its characteristics, as noble's discoverAllServicesAndCharacteristics finds
 * them, which never ended for a peripheral without services: it called back once the last
 * service's characteristics were in, and there was none.
 */
async function discoverAll(peripheral: Peripheral): Promise<Service[]> {
  const services = await peripheral.discoverServicesAsync([]);
  await Promise.all(services.map((service) => service.discoverCharacteristicsAsync([])));
  return services;
}

/** One connection of the central: discovery, reads, writes, subscriptions. */
export class CentralLink {
  private readonly chars = new Map<string, Characteristic>();

  constructor(private readonly peripheral: Peripheral) {}

  get address(): string {
    return this.peripheral.address;
  }

  get connected(): boolean {
    return this.peripheral.state === "connected";
  }

  get mtu(): number | null {
    return (this.peripheral as unknown as { mtu: number | null }).mtu;
  }

  /** Fires once when the link drops, whoever ends it. */
  onDisconnect(listener: (reason: number | undefined) => void): void {
    this.peripheral.once("disconnect", listener);
  }

  /** Discovers every service and characteristic; returns the characteristic UUIDs by service. */
  async discover(): Promise<Map<string, string[]>> {
    // A response noble would have looped on fails the discovery at once (att-discovery-guard.ts);
    // noble's own discovery is left to end as it may.
    let unwatch = (): void => {};
    const faulted = new Promise<never>((_, reject) => {
      unwatch = watchDiscoveryFaults(this.peripheral.address, (fault) =>
        reject(
          new RpmlabError("E_BLE_GATT", `${this.address}: discover: ${fault}`, {
            device: this.address,
          }),
        ),
      );
    });
    let services: Service[];
    try {
      services = await Promise.race([discoverAll(this.peripheral), faulted]);
    } finally {
      unwatch();
    }
    const out = new Map<string, string[]>();
    for (const s of services) {
      const list: string[] = [];
      for (const c of s.characteristics ?? []) {
        const uuid = labUuid(c.uuid);
        this.chars.set(`${labUuid(s.uuid)}/${uuid}`, c);
        if (!this.chars.has(uuid)) this.chars.set(uuid, c);
        list.push(uuid);
      }
      out.set(labUuid(s.uuid), list);
    }
    return out;
  }

  private char(uuid: string, service?: string): Characteristic {
    const c = this.chars.get(service === undefined ? uuid : `${service}/${uuid}`);
    if (c === undefined)
      throw new RpmlabError("E_BLE_GATT", `${this.address} has no characteristic ${uuid}`);
    return c;
  }

  /** Whether the characteristic pushes values (notify or indicate). */
  canSubscribe(uuid: string, service?: string): boolean {
    const p = this.chars.get(service === undefined ? uuid : `${service}/${uuid}`)?.properties ?? [];
    return p.includes("notify") || p.includes("indicate");
  }

  has(uuid: string, service?: string): boolean {
    return this.chars.has(service === undefined ? uuid : `${service}/${uuid}`);
  }

  async read(uuid: string, service?: string): Promise<Buffer> {
    // An Error Response comes back in the value's place (att-client-guard.ts).
    const value: Buffer | Error = await this.char(uuid, service).readAsync();
    if (value instanceof Error) throw this.failed(`read ${uuid}`, value);
    return value;
  }

  /** Writes with response; an Error Response fails it naming the ATT error (att-client-writes.ts). */
  async write(uuid: string, value: Uint8Array, service?: string): Promise<void> {
    const c = this.char(uuid, service);
    const error = await new Promise<unknown>((resolve) => {
      c.once("write", resolve);
      c.write(Buffer.from(value), false);
    });
    if (error instanceof Error) throw this.failed(`write ${uuid}`, error);
  }

  /**
   * Enables notifications or indications; `onValue` gets every value pushed after. A CCCD write
   * refused, or no CCCD, fails it naming the ATT error (att-client-writes.ts).
   */
  async subscribe(uuid: string, onValue: (value: Buffer) => void, service?: string): Promise<void> {
    const c = this.char(uuid, service);
    // noble wrote the CCCD unchanged and called it subscribed; nothing would ever come.
    if (!this.canSubscribe(uuid, service)) {
      throw new RpmlabError("E_BLE_GATT", `${this.address}: ${uuid} cannot notify or indicate`);
    }
    const listener = (data: Buffer, isNotification: boolean): void => {
      if (isNotification) onValue(data);
    };
    c.on("data", listener);
    const state = await new Promise<unknown>((resolve) => {
      c.once("notify", resolve);
      c.notify(true);
    });
    if (state instanceof Error) {
      c.removeListener("data", listener);
      throw this.failed(`subscribe ${uuid}`, state);
    }
  }

  /** E_BLE_GATT for a failed operation; an ATT error's code in details.attError. */
  private failed(operation: string, error: Error): RpmlabError {
    const attError = error instanceof AttError ? error.attCode : undefined;
    return new RpmlabError("E_BLE_GATT", `${this.address}: ${operation}: ${error.message}`, {
      device: this.address,
      ...(attError === undefined ? {} : { attError }),
    });
  }

  async rssi(): Promise<number> {
    return await this.peripheral.updateRssiAsync();
  }

  async disconnect(): Promise<void> {
    await this.peripheral.disconnectAsync();
  }
}
