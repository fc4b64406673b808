import seedrandom from "seedrandom";
import { RpmlabError } from "./errors.ts";

/**
 * A seeded random stream. Never global (seedrandom's `global: true` would replace Math.random for
 * everyone). `fork(label)` derives an independent stream from the seed and the label alone, so
 * an entity's values do not depend on how many values its parent or siblings drew before it.
 */
export class Rng {
  readonly seed: string;
  private readonly prng: seedrandom.PRNG;
  private spareNormal: number | undefined;

  constructor(seed: string | number) {
    this.seed = String(seed);
    this.prng = seedrandom.alea(this.seed);
  }

  /** An independent deterministic stream for one entity, e.g. `rng.fork("patient:P-001")`. */
  fork(label: string): Rng {
    return new Rng(`${this.seed}/${label}`);
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.prng();
  }

  /** Uniform in [min, max). */
  uniform(min: number, max: number): number {
    return min + (max - min) * this.prng();
  }

  /** Uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    if (!Number.isInteger(min) || !Number.isInteger(max) || max < min) {
      throw new RpmlabError("E_USAGE", `Rng.int needs integers min <= max, got ${min}, ${max}`);
    }
    return min + Math.floor(this.prng() * (max - min + 1));
  }

  /** true with probability p. */
  chance(p: number): boolean {
    return this.prng() < p;
  }

  /** Normal deviate (Marsaglia polar method), mean 0 and standard deviation 1 unless given. */
  normal(mean = 0, sd = 1): number {
    if (this.spareNormal !== undefined) {
      const spare = this.spareNormal;
      this.spareNormal = undefined;
      return mean + sd * spare;
    }
    let u: number;
    let v: number;
    let s: number;
    do {
      u = 2 * this.prng() - 1;
      v = 2 * this.prng() - 1;
      s = u * u + v * v;
    } while (s >= 1 || s === 0);
    const factor = Math.sqrt((-2 * Math.log(s)) / s);
    this.spareNormal = v * factor;
    return mean + sd * u * factor;
  }

  /** Number of events of a Poisson process with the given mean (Knuth; fine for small means). */
  poisson(mean: number): number {
    const limit = Math.exp(-mean);
    let k = 0;
    let p = this.prng();
    while (p > limit) {
      k++;
      p *= this.prng();
    }
    return k;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RpmlabError("E_USAGE", "Rng.pick on an empty list");
    return items[Math.floor(this.prng() * items.length)]!;
  }

  /** Upper-case hexadecimal string of `length` characters (hardware ids, MAC addresses). */
  hex(length: number): string {
    let out = "";
    for (let i = 0; i < length; i++) out += HEX[Math.floor(this.prng() * 16)];
    return out;
  }

  /** A version 4 UUID drawn from this stream (RFC 9562 §5.4 layout). */
  uuid(): string {
    // 32 digits drawn, then the variant; the 13th digit drawn is replaced by the version.
    const r = this.lowerHex(32);
    const variant = VARIANT[Math.floor(this.prng() * 4)]!;
    return `${r.slice(0, 8)}-${r.slice(8, 12)}-4${r.slice(13, 16)}-${variant}${r.slice(17, 20)}-${r.slice(20)}`;
  }

  /**
   * A version 7 UUID (RFC 9562 §5.7): `ms` (a Clock time) in its first 48 bits, the rest drawn
   * from this stream. Ids made one after another sort by time, so a table keyed by them takes
   * its rows at the end of its index instead of at random places.
   */
  uuidV7(ms: number): string {
    const t = Math.max(0, Math.floor(ms)).toString(16).padStart(12, "0").slice(-12);
    // As uuid(): 20 digits drawn, the first replaced by the version, then the variant.
    const r = this.lowerHex(20);
    const variant = VARIANT[Math.floor(this.prng() * 4)]!;
    return `${t.slice(0, 8)}-${t.slice(8)}-7${r.slice(1, 4)}-${variant}${r.slice(5, 8)}-${r.slice(8)}`;
  }

  /** Lower-case hexadecimal digits, drawn as hex() draws them. */
  private lowerHex(length: number): string {
    let out = "";
    for (let i = 0; i < length; i++) out += LOWER_HEX[Math.floor(this.prng() * 16)];
    return out;
  }
}

const HEX = "0123456789ABCDEF";
const LOWER_HEX = "0123456789abcdef";
/** The variant digit, binary 10xx (RFC 9562 §4.1): its two low bits drawn. */
const VARIANT = "89ab";
