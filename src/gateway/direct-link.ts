import { attErrorText } from "../ble/hosts/att-errors.ts";
import { ATT, type CharacteristicDef, type ServiceDef } from "../ble/hosts/peripheral.ts";
import { RpmlabError } from "../core/errors.ts";
import { canonicalUuid } from "../gatt/uuids.ts";
import type { GattLink } from "./gatt-link.ts";

/** ATT_MTU of a direct link: what noble and bleno agree on over the virtual controller. */
export const DIRECT_MTU = 247;

type Send = (value: Uint8Array) => Promise<void>;

/** Vol 3 Part F §3.4.1.1. */
const ATT_READ_NOT_PERMITTED = 0x02;
const ATT_WRITE_NOT_PERMITTED = 0x03;

/**
 * `--ble direct`: a gateway session on a device's GATT database in this process, with no HCI,
 * controller or radio between them (DESIGN "Boundaries"). The device's own handlers serve reads,
 * writes and subscriptions exactly as bleno would call them (BleDevice.services()), so the same
 * codecs, RACP server, clock and offline store run; what is skipped is the host stacks and the
 * link layer, too heavy for fleets of thousands. Values are delivered at once, in order.
 */
export class DirectLink implements GattLink {
  readonly mtu = DIRECT_MTU;
  private readonly chars = new Map<string, CharacteristicDef>();
  private readonly subscribed = new Set<CharacteristicDef>();
  private readonly listeners: ((reason: number | undefined) => void)[] = [];
  private closed = false;

  constructor(
    readonly address: string,
    private readonly services: readonly ServiceDef[],
    /** Called once when the link ends, either side (the device forgets its subscriptions). */
    private readonly onClose: () => void,
  ) {}

  get connected(): boolean {
    return !this.closed;
  }

  onDisconnect(listener: (reason: number | undefined) => void): void {
    if (this.closed) listener(undefined);
    else this.listeners.push(listener);
  }

  async discover(): Promise<Map<string, string[]>> {
    this.check("discover");
    const out = new Map<string, string[]>();
    for (const service of this.services) {
      const list: string[] = [];
      for (const c of service.characteristics) {
        const uuid = canonicalUuid(c.uuid);
        if (!this.chars.has(uuid)) this.chars.set(uuid, c);
        list.push(uuid);
      }
      out.set(canonicalUuid(service.uuid), list);
    }
    return out;
  }

  canSubscribe(uuid: string): boolean {
    const p = this.chars.get(uuid)?.properties ?? [];
    return p.includes("notify") || p.includes("indicate");
  }

  async read(uuid: string): Promise<Uint8Array> {
    const c = this.char(uuid, "read");
    // As the device's GATT server answers over BLE: Read Not Permitted.
    if (c.read === undefined) throw this.attError(`read ${uuid}`, ATT_READ_NOT_PERMITTED);
    try {
      return c.read();
    } catch {
      // A value that cannot be encoded: bleno's server answers Unlikely Error (peripheral.ts),
      // and the gateway's client fails the read naming it.
      throw this.attError(`read ${uuid}`, ATT.UNLIKELY_ERROR);
    }
  }

  async write(uuid: string, value: Uint8Array): Promise<void> {
    const c = this.char(uuid, "write");
    if (c.write === undefined) throw this.attError(`write ${uuid}`, ATT_WRITE_NOT_PERMITTED);
    const status = c.write(Buffer.from(value));
    // Vol 3 Part F §3.4.1.1: a non-zero status is an Error Response, named as over BLE.
    if (status !== 0) throw this.attError(`write ${uuid}`, status);
  }

  async subscribe(uuid: string, onValue: (value: Buffer) => void): Promise<void> {
    const c = this.char(uuid, "subscribe");
    if (c.subscribe === undefined) throw this.gattError(`${uuid} cannot notify or indicate`);
    const send: Send = async (value) => {
      if (this.closed) throw this.gattError(`${uuid}: the link is down`);
      onValue(Buffer.from(value));
    };
    this.subscribed.add(c);
    c.subscribe(send, this.mtu - 3);
  }

  async disconnect(): Promise<void> {
    this.close(0x16); // Vol 1 Part F §2: Connection Terminated By Local Host
  }

  /** The device went out of reach: the link drops (supervision timeout, 0x08). */
  drop(): void {
    this.close(0x08);
  }

  private close(reason: number): void {
    if (this.closed) return;
    this.closed = true;
    for (const c of this.subscribed) c.unsubscribe?.();
    this.subscribed.clear();
    this.onClose();
    for (const listener of this.listeners.splice(0)) listener(reason);
  }

  private char(uuid: string, operation: string): CharacteristicDef {
    this.check(operation);
    const c = this.chars.get(uuid);
    if (c === undefined) throw this.gattError(`has no characteristic ${uuid}`);
    return c;
  }

  private check(operation: string): void {
    if (this.closed) throw this.gattError(`${operation}: the link is down`);
  }

  /** An operation the device refused with an ATT error, as CentralLink reports one. */
  private attError(operation: string, code: number): RpmlabError {
    return new RpmlabError("E_BLE_GATT", `${this.address}: ${operation}: ${attErrorText(code)}`, {
      device: this.address,
      attError: code,
    });
  }

  private gattError(message: string): RpmlabError {
    return new RpmlabError("E_BLE_GATT", `${this.address}: ${message}`, { device: this.address });
  }
}
