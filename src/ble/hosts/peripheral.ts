import type BlenoModule from "@abandonware/bleno";
import type { Clock } from "../../core/clock.ts";
import { RpmlabError } from "../../core/errors.ts";
import { guardGattServer } from "./att-server-guard.ts";
import { attMtuOf, cccdValueOf, indicating } from "./bleno-gatt.ts";
import { guardBlenoPairing } from "./bleno-pairing.ts";
import { loadBleno, type SocketFactory, stopDevUpPoll, withoutProcessHooks } from "./load.ts";
import { OutboundQueue } from "./outbound-queue.ts";

type Bleno = typeof BlenoModule;
type Property = "read" | "write" | "indicate" | "notify" | "writeWithoutResponse";

/** ATT error codes a characteristic handler may answer with (Vol 3 Part F §3.4.1.1). */
export const ATT = {
  SUCCESS: 0x00,
  INVALID_OFFSET: 0x07,
  INVALID_ATTRIBUTE_LENGTH: 0x0d,
  UNLIKELY_ERROR: 0x0e,
  VALUE_NOT_ALLOWED: 0x13,
  /** Record Access Control Point: Client Characteristic Configuration Descriptor improperly configured (GSS §2.4). */
  CCCD_IMPROPERLY_CONFIGURED: 0xfd,
  PROCEDURE_ALREADY_IN_PROGRESS: 0xfe,
} as const;

/** One characteristic of a GATT server, free of any host stack's types. */
export interface CharacteristicDef {
  /** "2A35" or a 128-bit UUID with or without dashes. */
  uuid: string;
  properties: readonly Property[];
  /** Operations that need an encrypted link (bleno then asks the central to pair). */
  secure?: readonly Property[];
  read?: () => Uint8Array;
  /** Returns an ATT status (0 accepts the write). */
  write?: (value: Buffer) => number;
  /**
   * Called when the central enables notifications or indications. `send` queues a value; it
   * resolves once sent (notification) or confirmed (indication), and rejects if the link drops
   * or the confirmation does not come within the ATT transaction timeout.
   */
  subscribe?: (send: (value: Uint8Array) => Promise<void>, maxValueSize: number) => void;
  unsubscribe?: () => void;
}

export interface ServiceDef {
  uuid: string;
  characteristics: readonly CharacteristicDef[];
}

export interface PeripheralEvents {
  accept(address: string): void;
  disconnect(address: string): void;
  mtu(mtu: number): void;
}

const bare = (uuid: string): string => uuid.replaceAll("-", "").toLowerCase();

/**
 * A GATT server and advertiser on an unmodified bleno instance, driven by plain definitions:
 * the virtual devices (src/devices) describe their services without touching bleno.
 */
export class BlenoPeripheral {
  private readonly outbound: OutboundQueue;

  private constructor(
    private readonly bleno: Bleno,
    clock: Clock,
  ) {
    // An indication unconfirmed for 30 s ends the link, as BlueZ shuts the bearer (Vol 3 Part F §3.3.3).
    this.outbound = new OutboundQueue(clock, () => bleno.disconnect());
    bleno.on("disconnect", () => this.outbound.clear("the central disconnected"));
  }

  /** Loads a fresh bleno on the given sockets and waits for poweredOn. */
  static open(factory: SocketFactory, clock: Clock): Promise<BlenoPeripheral> {
    const bleno = loadBleno(factory) as Bleno;
    guardGattServer(bleno);
    guardBlenoPairing(bleno);
    return new Promise((resolve, reject) => {
      withoutProcessHooks(() =>
        bleno.on("stateChange", (state) => {
          if (state === "poweredOn") resolve(new BlenoPeripheral(bleno, clock));
          else if (state === "unsupported" || state === "unauthorized") {
            // Nothing will use this host: its poll must not hold the process (rpmlab device
            // and gateway would print the error and never exit).
            stopDevUpPoll(bleno);
            reject(new RpmlabError("E_BLE_HOST", `bleno: adapter is ${state}`));
          }
        }),
      );
    });
  }

  get address(): string {
    return this.bleno.address;
  }

  get mtu(): number {
    return this.bleno.mtu;
  }

  on<K extends keyof PeripheralEvents>(event: K, listener: PeripheralEvents[K]): void {
    if (event === "mtu") this.bleno.on("mtuChange", listener as PeripheralEvents["mtu"]);
    else this.bleno.on(event as "accept", listener as PeripheralEvents["accept"]);
  }

  serve(services: readonly ServiceDef[]): Promise<void> {
    const b = this.bleno;
    const built = services.map(
      (s) =>
        new b.PrimaryService({
          uuid: bare(s.uuid),
          characteristics: s.characteristics.map((c) => {
            let confirm: (() => void) | undefined;
            /** Whether the central's CCCD asks for values: off, what is queued is not sent. */
            let subscribed = false;
            const unwanted = () =>
              subscribed ? undefined : `the central turned ${c.uuid}'s CCCD off`;
            const characteristic: InstanceType<Bleno["Characteristic"]> = new b.Characteristic({
              uuid: bare(c.uuid),
              properties: c.properties,
              secure: c.secure ?? [],
              onReadRequest:
                c.read === undefined
                  ? null
                  : (offset, callback) => {
                      let value: Buffer;
                      try {
                        value = Buffer.from(c.read!());
                      } catch {
                        // A value that cannot be encoded (a device clock past 9999) is still
                        // answered: left to bleno, the read went unanswered for 30 s.
                        callback(ATT.UNLIKELY_ERROR);
                        return;
                      }
                      if (offset > value.length) callback(ATT.INVALID_OFFSET);
                      else callback(ATT.SUCCESS, value.subarray(offset));
                    },
              onWriteRequest:
                c.write === undefined
                  ? null
                  : (data, offset, _withoutResponse, callback) =>
                      callback(offset === 0 ? c.write!(data) : ATT.INVALID_OFFSET),
              onSubscribe:
                c.subscribe === undefined
                  ? null
                  : (max, update) => {
                      // Indications where the central's CCCD asks for them (Vol 3 Part G
                      // §3.3.3.3): bleno notified whenever the characteristic has Notify, also
                      // to a central that enabled Indication alone.
                      const indicates =
                        c.properties.includes("indicate") &&
                        (!c.properties.includes("notify") ||
                          cccdValueOf(b, characteristic) === 0x0002);
                      const send = indicates ? indicating(characteristic, update) : update;
                      subscribed = true;
                      c.subscribe!((v) => {
                        // bleno would cut the value at ATT_MTU − 3 without a word (Vol 3 Part F
                        // §3.4.7.1): the ATT_MTU now, which an Exchange MTU after the subscribe
                        // may have changed (bleno's `max` is the one at the subscribe).
                        const limit = (attMtuOf(b) ?? max + 3) - 3;
                        if (v.length > limit) {
                          const why = `${c.uuid}: a ${v.length}-octet value exceeds ATT_MTU − 3 = ${limit}`;
                          return Promise.reject(new RpmlabError("E_BLE_GATT", why));
                        }
                        return this.outbound.push(
                          indicates,
                          (done) => {
                            confirm = done;
                            send(Buffer.from(v));
                          },
                          unwanted,
                        );
                      }, max);
                    },
              onUnsubscribe: () => {
                subscribed = false;
                c.unsubscribe?.();
              },
              // Handle Value Confirmation for this characteristic's indication (Vol 3 Part F §3.4.7.3).
              onIndicate: () => {
                const done = confirm;
                confirm = undefined;
                done?.();
              },
            });
            return characteristic;
          }),
        }),
    );
    return new Promise((resolve, reject) =>
      b.setServices(built, (error) => (error ? reject(error) : resolve())),
    );
  }

  /** Advertises the name (in the scan response) and the service UUIDs (Flags + UUID list). */
  advertise(name: string, serviceUuids: readonly string[]): Promise<void> {
    return new Promise((resolve, reject) =>
      this.bleno.startAdvertising(name, serviceUuids.map(bare), (error) =>
        error ? reject(error) : resolve(),
      ),
    );
  }

  /** Advertises exact AD structures (Core Supplement Part A), each at most 31 octets. */
  advertiseData(advertisement: Buffer, scanResponse: Buffer): Promise<void> {
    return new Promise((resolve, reject) =>
      this.bleno.startAdvertisingWithEIRData(advertisement, scanResponse, (error) =>
        error ? reject(error) : resolve(),
      ),
    );
  }

  stopAdvertising(): Promise<void> {
    return new Promise((resolve) => this.bleno.stopAdvertising(() => resolve()));
  }

  /**
   * Stops the host's 1-second adapter poll, which neither stack can stop (DESIGN.md): with the
   * poll method of its Hci instance replaced, the chain ends at its next tick, so a process
   * whose transport is closed can exit. In tests, run hosts in workers and terminate them.
   */
  quiesce(): void {
    stopDevUpPoll(this.bleno);
  }

  /** Ends the current connection from the peripheral's side. */
  disconnect(): void {
    this.bleno.disconnect();
  }
}
