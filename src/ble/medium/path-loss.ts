/**
 * Radio propagation for the medium: log-distance path loss and a packet error rate that grows as
 * RSSI nears the receiver's sensitivity. The numbers are the usual 2.4 GHz indoor defaults; the
 * medium takes them from its options so a scenario can set its own.
 */
export interface Propagation {
  /** Transmit power, dBm (LE Read Advertising Physical Channel Tx Power, Vol 4 Part E §7.8.6). */
  txPowerDbm: number;
  /** Path loss at the reference distance of 1 m, dB (free space at 2.4 GHz is about 40 dB). */
  referenceLossDb: number;
  /** Path loss exponent n: 2 in free space, about 2.2–3.5 indoors. */
  exponent: number;
  /** Below this RSSI nothing is received, dBm (Vol 6 Part A §4.1: at most −70 dBm required). */
  sensitivityDbm: number;
  /** Beyond this distance nothing is received whatever the RSSI, m. */
  rangeM: number;
}

export const DEFAULT_PROPAGATION: Propagation = {
  txPowerDbm: 0,
  referenceLossDb: 40,
  exponent: 2.2,
  sensitivityDbm: -95,
  rangeM: 30,
};

export interface Position {
  readonly x: number;
  readonly y: number;
}

export function distance(a: Position, b: Position): number {
  return Math.hypot(a.x - b.x, a.y - b.y);
}

/** RSSI at the receiver, dBm: PL(d) = PL(d0) + 10·n·log10(d/d0) with d0 = 1 m. */
export function rssiAt(p: Propagation, metres: number): number {
  const d = Math.max(metres, 1);
  return p.txPowerDbm - (p.referenceLossDb + 10 * p.exponent * Math.log10(d));
}

/**
 * Probability that one packet is lost at this RSSI: about 1 % with 20 dB of margin above the
 * sensitivity, 50 % at 3 dB of margin, certain below the sensitivity; plus `interference`
 * (0–1), a fault that raises loss everywhere on the medium.
 */
export function lossProbability(p: Propagation, rssi: number, interference: number): number {
  if (rssi < p.sensitivityDbm) return 1;
  const margin = rssi - p.sensitivityDbm;
  const base = 1 / (1 + Math.exp((margin - 3) / 3.7));
  return Math.min(1, base + interference * (1 - base));
}
