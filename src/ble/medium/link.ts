import type { Clock, TimerHandle } from "../../core/clock.ts";
import type { Rng } from "../../core/rng.ts";
import type { Station } from "./station.ts";

/** Link Layer connection parameters, in HCI units (Vol 4 Part E §7.8.12). */
export interface LinkParams {
  /** Connection interval, units of 1.25 ms. */
  interval: number;
  latency: number;
  /** Supervision timeout, units of 10 ms. */
  timeout: number;
}

/**
 * What travels on a connection. Data PDUs carry L2CAP fragments with their LLID (Vol 6 Part B
 * §2.4: 0b10 start, 0b01 continuation); control PDUs are the LL procedures the hosts can start
 * (§2.4.2), held as values rather than bytes: the hosts never see them.
 */
export type LinkPdu =
  | { kind: "data"; llid: 1 | 2; bytes: Buffer }
  | { kind: "terminate"; reason: number }
  | { kind: "enc_req"; random: Buffer; ediv: number; key: Buffer }
  | { kind: "enc_rsp"; ok: true }
  | { kind: "enc_reject"; error: number }
  | { kind: "mic_failure" }
  | { kind: "conn_update"; params: LinkParams }
  | { kind: "feature_req" }
  | { kind: "feature_rsp"; features: Buffer };

interface InFlight {
  pdu: LinkPdu;
  onAcked: (() => void) | undefined;
}

/** One side's transmit queue: PDUs go out in order, each after its retransmissions. */
class Direction {
  readonly queue: InFlight[] = [];
  timer: TimerHandle | undefined;
  constructor(
    readonly from: Station,
    readonly to: Station,
  ) {}
}

export interface LinkEnvironment {
  readonly clock: Clock;
  /** Loss probability of one PDU on this link now; 1 when the peers cannot hear each other. */
  lossNow(link: Link): number;
  /** Called when no PDU can get through within the supervision timeout. */
  supervisionLost(link: Link): void;
}

/**
 * One LE connection between two stations on the medium. The Link Layer acknowledges and
 * retransmits every PDU, so data is never lost, only delayed: a lost PDU goes again at the next
 * connection event (Vol 6 Part B §4.5.9), and a link that delivers nothing for the supervision
 * timeout is dropped (§4.5.2).
 */
export class Link {
  private readonly ab: Direction;
  private readonly ba: Direction;
  private open = true;
  rssi = 0;

  constructor(
    readonly id: number,
    readonly central: Station,
    readonly peripheral: Station,
    public params: LinkParams,
    private readonly env: LinkEnvironment,
    private readonly rng: Rng,
  ) {
    this.ab = new Direction(central, peripheral);
    this.ba = new Direction(peripheral, central);
  }

  get isOpen(): boolean {
    return this.open;
  }

  peerOf(station: Station): Station {
    return station === this.central ? this.peripheral : this.central;
  }

  intervalMs(): number {
    return this.params.interval * 1.25;
  }

  timeoutMs(): number {
    return this.params.timeout * 10;
  }

  /** Queues a PDU from `from`; `onAcked` runs once the peer has it. */
  send(from: Station, pdu: LinkPdu, onAcked?: () => void): void {
    if (!this.open) return;
    const dir = from === this.central ? this.ab : this.ba;
    dir.queue.push({ pdu, onAcked });
    if (dir.queue.length === 1 && dir.timer === undefined) this.pump(dir);
  }

  /** Tries the queue again (the medium calls this when the peers can hear each other again). */
  resume(): void {
    for (const dir of [this.ab, this.ba]) if (dir.timer === undefined) this.pump(dir);
  }

  private pump(dir: Direction): void {
    while (this.open && dir.queue.length > 0 && dir.timer === undefined) {
      const loss = this.env.lossNow(this);
      if (loss >= 1) return; // unreachable: wait for resume() or the supervision timeout
      let attempts = 0;
      while (loss > 0 && this.rng.next() < loss) attempts++;
      if (attempts === 0) {
        this.deliver(dir);
        continue;
      }
      const delay = attempts * this.intervalMs();
      if (delay >= this.timeoutMs()) {
        this.env.supervisionLost(this);
        return;
      }
      dir.timer = this.env.clock.setTimeout(() => {
        dir.timer = undefined;
        if (!this.open) return;
        this.deliver(dir);
        this.pump(dir);
      }, delay);
    }
  }

  private deliver(dir: Direction): void {
    const item = dir.queue.shift();
    if (item === undefined) return;
    dir.to.linkReceive(this, item.pdu);
    item.onAcked?.();
  }

  /** Ends the link at once: pending PDUs are dropped, timers cancelled. */
  close(): void {
    if (!this.open) return;
    this.open = false;
    for (const dir of [this.ab, this.ba]) {
      if (dir.timer !== undefined) this.env.clock.clearTimeout(dir.timer);
      dir.timer = undefined;
      dir.queue.length = 0;
    }
  }
}
