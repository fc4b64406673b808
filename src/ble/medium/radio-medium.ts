import type { Clock, TimerHandle } from "../../core/clock.ts";
import { RpmlabError } from "../../core/errors.ts";
import type { Rng } from "../../core/rng.ts";
import { STATUS } from "../hci/constants.ts";
import { Link, type LinkEnvironment, type LinkParams } from "./link.ts";
import {
  DEFAULT_PROPAGATION,
  distance,
  lossProbability,
  type Position,
  type Propagation,
  rssiAt,
} from "./path-loss.ts";
import type { AdvertisingPdu, Station } from "./station.ts";

export interface RadioMediumOptions {
  clock: Clock;
  rng: Rng;
  propagation?: Partial<Propagation>;
}

interface Placed {
  station: Station;
  position: Position;
  rng: Rng;
}

/** Time from CONNECT_IND to the first connection event: transmitWindowDelay (Vol 6 Part B §4.5.3). */
const TRANSMIT_WINDOW_DELAY_MS = 1.25;

/**
 * The air between virtual controllers, after Bumble's LocalLink and rootcanal's phy layer: every
 * station has a position; RSSI follows log-distance path loss; each advertising or data PDU is
 * lost with a seeded probability that grows as RSSI falls; nothing crosses the range limit or a
 * partition. Connections are Links that retransmit until the supervision timeout. Everything
 * waits on the Clock, so a scenario on virtual time replays the same losses.
 */
export class RadioMedium implements LinkEnvironment {
  readonly clock: Clock;
  readonly propagation: Propagation;
  private readonly rng: Rng;
  private readonly stations = new Map<Station, Placed>();
  private readonly links = new Set<Link>();
  private readonly supervision = new Map<Link, TimerHandle>();
  private partitionOf = new Map<string, number>();
  private interference = 0;
  /** Extra loss on every PDU to or from these stations (setInterferenceAround). */
  private readonly localInterference = new Map<Station, number>();
  private nextLinkId = 1;

  constructor(options: RadioMediumOptions) {
    this.clock = options.clock;
    this.rng = options.rng;
    this.propagation = { ...DEFAULT_PROPAGATION, ...options.propagation };
  }

  join(station: Station, position: Position = { x: 0, y: 0 }): void {
    this.stations.set(station, { station, position, rng: this.rng.fork(`rx:${station.address}`) });
  }

  /** The station is switched off: its links end on the peer's side by supervision timeout. */
  leave(station: Station): void {
    this.stations.delete(station);
    this.localInterference.delete(station);
    for (const link of [...this.links]) {
      if (link.central === station || link.peripheral === station)
        this.dropLink(link, STATUS.CONNECTION_TIMEOUT);
    }
  }

  positionOf(station: Station): Position | undefined {
    return this.stations.get(station)?.position;
  }

  /** Moves a station; links that can no longer hear each other start their supervision timer. */
  move(station: Station, position: Position): void {
    const placed = this.stations.get(station);
    if (placed === undefined)
      throw new RpmlabError("E_USAGE", `${station.name} is not on the medium`);
    placed.position = position;
    this.reevaluate();
  }

  /** Fault: stations in different groups cannot hear each other; unlisted stations hear no one. */
  partition(groups: ReadonlyArray<ReadonlyArray<string>>): void {
    const map = new Map<string, number>();
    groups.forEach((group, i) => {
      for (const address of group) map.set(address.toLowerCase(), i);
    });
    this.partitionOf = map;
    this.reevaluate();
  }

  heal(): void {
    this.partitionOf = new Map();
    this.reevaluate();
  }

  /** Fault: extra loss probability (0–1) on every PDU of the medium. */
  setInterference(level: number): void {
    if (!(level >= 0 && level <= 1)) {
      throw new RpmlabError("E_CONFIG_INVALID", `interference must be within 0–1, got ${level}`, {
        field: "interference",
      });
    }
    this.interference = level;
    this.reevaluate();
  }

  /**
   * Fault: extra loss probability (0–1) on every PDU to or from `stations` only — a noisy corner
   * around one household's devices and gateway; 0 ends it.
   */
  setInterferenceAround(stations: readonly Station[], level: number): void {
    if (!(level >= 0 && level <= 1)) {
      throw new RpmlabError("E_CONFIG_INVALID", `interference must be within 0–1, got ${level}`, {
        field: "interference",
      });
    }
    for (const station of stations) {
      if (level === 0) this.localInterference.delete(station);
      else this.localInterference.set(station, level);
    }
    this.reevaluate();
  }

  private interferenceBetween(a: Station, b: Station): number {
    return Math.max(
      this.interference,
      this.localInterference.get(a) ?? 0,
      this.localInterference.get(b) ?? 0,
    );
  }

  /** RSSI from `a` at `b`, or undefined when `b` cannot hear `a` at all. */
  rssiBetween(a: Station, b: Station): number | undefined {
    const pa = this.stations.get(a);
    const pb = this.stations.get(b);
    if (pa === undefined || pb === undefined) return undefined;
    if (this.partitionOf.size > 0) {
      const ga = this.partitionOf.get(a.address);
      if (ga === undefined || ga !== this.partitionOf.get(b.address)) return undefined;
    }
    const metres = distance(pa.position, pb.position);
    if (metres > this.propagation.rangeM) return undefined;
    const rssi = rssiAt(this.propagation, metres);
    return rssi < this.propagation.sensitivityDbm ? undefined : rssi;
  }

  private received(from: Station, to: Station): number | undefined {
    const rssi = this.rssiBetween(from, to);
    if (rssi === undefined) return undefined;
    const rx = this.stations.get(to)!;
    const loss = lossProbability(this.propagation, rssi, this.interferenceBetween(from, to));
    return rx.rng.next() < loss ? undefined : rssi;
  }

  /** One advertising event: every listening station that receives the PDU hears it. */
  advertise(from: Station, pdu: AdvertisingPdu): void {
    for (const { station } of this.stations.values()) {
      if (station === from || !station.listening()) continue;
      const rssi = this.received(from, station);
      if (rssi !== undefined) station.hearAdvertisement(pdu, from, rssi);
    }
  }

  /** SCAN_REQ from `scanner` and the SCAN_RSP back, each of which may be lost. */
  scanRequest(
    scanner: Station,
    advertiser: Station,
  ): { data: Uint8Array; rssi: number } | undefined {
    if (this.received(scanner, advertiser) === undefined) return undefined;
    const data = advertiser.answerScanRequest();
    if (data === undefined) return undefined;
    const rssi = this.received(advertiser, scanner);
    return rssi === undefined ? undefined : { data, rssi };
  }

  /**
   * CONNECT_IND from `central` to `peripheral` (Vol 6 Part B §4.5.1): both stations are told
   * the link is up at the first connection event. The CONNECT_IND itself may be lost.
   */
  connect(central: Station, peripheral: Station, params: LinkParams): Link | undefined {
    if (this.received(central, peripheral) === undefined) return undefined;
    const id = this.nextLinkId++;
    const link = new Link(id, central, peripheral, params, this, this.rng.fork(`link:${id}`));
    link.rssi = this.rssiBetween(peripheral, central) ?? this.propagation.sensitivityDbm;
    this.links.add(link);
    this.clock.setTimeout(() => {
      if (!link.isOpen) return;
      central.linkUp(link);
      peripheral.linkUp(link);
    }, TRANSMIT_WINDOW_DELAY_MS + link.intervalMs());
    return link;
  }

  /** Both ends are done with the link (LL_TERMINATE_IND acknowledged). */
  release(link: Link): void {
    link.close();
    this.links.delete(link);
    this.clearSupervision(link);
  }

  lossNow(link: Link): number {
    const rssi = this.rssiBetween(link.central, link.peripheral);
    if (rssi === undefined) return 1;
    link.rssi = rssi;
    return lossProbability(
      this.propagation,
      rssi,
      this.interferenceBetween(link.central, link.peripheral),
    );
  }

  supervisionLost(link: Link): void {
    this.dropLink(link, STATUS.CONNECTION_TIMEOUT);
  }

  /** Ends a link at once for both ends with `reason` (supervision timeout, MIC failure, reset). */
  dropLink(link: Link, reason: number): void {
    if (!link.isOpen) return;
    this.release(link);
    link.central.linkDown(link, reason);
    link.peripheral.linkDown(link, reason);
  }

  private clearSupervision(link: Link): void {
    const timer = this.supervision.get(link);
    if (timer !== undefined) this.clock.clearTimeout(timer);
    this.supervision.delete(link);
  }

  /** Starts or cancels each link's supervision timer after the topology changed. */
  private reevaluate(): void {
    for (const link of this.links) {
      const reachable = this.lossNow(link) < 1;
      if (reachable) {
        this.clearSupervision(link);
        link.resume();
      } else if (!this.supervision.has(link)) {
        this.supervision.set(
          link,
          this.clock.setTimeout(() => {
            this.supervision.delete(link);
            this.dropLink(link, STATUS.CONNECTION_TIMEOUT);
          }, link.timeoutMs()),
        );
      }
    }
  }

  /** Ends every link and timer: the medium is being shut down. */
  close(): void {
    for (const link of [...this.links]) this.release(link);
    this.stations.clear();
    this.localInterference.clear();
  }
}
