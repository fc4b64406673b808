import { EmulatedRadio } from "../../../src/ble/radio.ts";
import { Catalogue } from "../../../src/catalogue/catalogue.ts";
import type { Profile } from "../../../src/catalogue/schema.ts";
import { SystemClock } from "../../../src/core/clock.ts";
import { Rng } from "../../../src/core/rng.ts";
import { DeviceHost } from "../../../src/devices/device-host.ts";
import type { DeviceWorkerData } from "../../../src/devices/device-protocol.ts";
import { GatewayHost } from "../../../src/gateway/gateway-host.ts";
import type { RawCharacteristicValue } from "../../../src/gateway/raw-values.ts";
import { generateReadings } from "../../../src/readings/generate.ts";
import { PatientModels } from "../../../src/readings/patients.ts";
import type { PhysicalReading } from "../../../src/readings/types.ts";

export const catalogue = Catalogue.load();
const patients = PatientModels.load();

/**
 * Real noble and bleno, each in its worker, on virtual controllers in the test's thread.
 * Hosts in workers run on real time (DeviceHost's SystemClock), so the medium runs on a
 * SystemClock here; hosts in this thread can follow a VirtualClock (virtual-time-hosts.test.ts).
 */
export class HostLab {
  readonly clock = new SystemClock();
  readonly radio = new EmulatedRadio(this.clock, new Rng("host-lab"));
  readonly values: RawCharacteristicValue[] = [];
  private readonly waiters = new Set<() => void>();

  /** Resolves once `count` values matching `pick` have been received (within `ms`). */
  valuesReceived(
    count: number,
    pick: (v: RawCharacteristicValue) => boolean,
    ms = 20_000,
  ): Promise<void> {
    return within(ms, `${count} values`, (done) => {
      const check = (): void => {
        if (this.values.filter(pick).length >= count) {
          this.waiters.delete(check);
          done(undefined);
        }
      };
      this.waiters.add(check);
      check();
    });
  }
  private readonly closers: Array<() => Promise<void>> = [];

  async device(data: DeviceWorkerData): Promise<DeviceHost> {
    const host = await DeviceHost.start(this.radio.controller(`device:${data.serial}`), data);
    this.closers.push(() => host.close());
    return host;
  }

  async gateway(): Promise<GatewayHost> {
    const host = await GatewayHost.start(this.radio.controller("gateway"), {
      deliver: (v) => {
        this.values.push(v);
        for (const w of [...this.waiters]) w();
      },
    });
    this.closers.push(() => host.close());
    return host;
  }

  async close(): Promise<void> {
    await Promise.all(this.closers.splice(0).map((c) => c()));
    this.radio.close();
    this.clock.dispose();
  }
}

/** Readings of one device for a patient, as the generators make them. */
export function readingsFor(profile: Profile, seed: string, count: number): PhysicalReading[] {
  const model = patients.models.find((m) => m.name.includes("hypert")) ?? patients.models[0]!;
  const out: PhysicalReading[] = [];
  for (let days = 7; out.length < count && days <= 3660; days *= 4) {
    out.splice(0);
    for (const g of generateReadings({
      devices: [profile],
      patient: model,
      rng: new Rng(seed),
      days,
      duplicateRate: 0,
    })) {
      if (out.length < count)
        out.push({
          timestamp: g.timestamp,
          timezone_offset: g.timezone_offset,
          records: g.records,
        });
    }
  }
  return out;
}

/** Resolves with the first event, or rejects after `ms` of real time. */
export function within<T>(
  ms: number,
  what: string,
  start: (resolve: (v: T) => void) => void,
): Promise<T> {
  const clock = new SystemClock();
  return new Promise<T>((resolve, reject) => {
    clock.setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
    start((v) => {
      clock.dispose();
      resolve(v);
    });
  });
}
