import { type ErrorCode, RpmlabError } from "../core/errors.ts";
import { DATE_TIME_LENGTH, type DateTime, dateTimeProblem } from "./date-time.ts";
import { FLOAT, fromMderRaw, type Medfloat, SFLOAT, toMderRaw } from "./medfloat.ts";

/**
 * The one cursor for GATT binary I/O (after zigbee-herdsman's buffalo): little-endian integers
 * (GSS: multi-octet fields go least significant octet first), SFLOAT/FLOAT and Date Time. Every read names its field, so a short value fails with E_CODEC_TRUNCATED naming the field
 * and the byte offset; every write range-checks its value and names the field.
 *
 * `what` is the characteristic's name, the first words of every message.
 */
export class ByteReader {
  private pos = 0;
  /** The field read last, named when bytes follow it. */
  private lastField = "(nothing)";

  constructor(
    private readonly bytes: Uint8Array,
    readonly what: string,
  ) {}

  get offset(): number {
    return this.pos;
  }

  get remaining(): number {
    return this.bytes.length - this.pos;
  }

  /** An error about the field that starts at byte `offset`, for decoders' own checks. */
  fail(code: ErrorCode, field: string, offset: number, message: string): RpmlabError {
    return new RpmlabError(code, `${this.what}: ${field} at byte ${offset}: ${message}`, {
      field,
      offset,
    });
  }

  private need(n: number, field: string): number {
    const at = this.pos;
    if (at + n > this.bytes.length) {
      throw new RpmlabError(
        "E_CODEC_TRUNCATED",
        `${this.what}: truncated at byte ${at} reading ${field} (needs ${n} byte${n === 1 ? "" : "s"}, ${this.bytes.length - at} left)`,
        { field, offset: at },
      );
    }
    this.pos = at + n;
    this.lastField = field;
    return at;
  }

  u8(field: string): number {
    return this.bytes[this.need(1, field)]!;
  }

  s8(field: string): number {
    const v = this.bytes[this.need(1, field)]!;
    return v >= 0x80 ? v - 0x100 : v;
  }

  u16(field: string): number {
    const at = this.need(2, field);
    return this.bytes[at]! | (this.bytes[at + 1]! << 8);
  }

  s16(field: string): number {
    const v = this.u16(field);
    return v >= 0x8000 ? v - 0x10000 : v;
  }

  u24(field: string): number {
    const at = this.need(3, field);
    return this.bytes[at]! | (this.bytes[at + 1]! << 8) | (this.bytes[at + 2]! << 16);
  }

  u32(field: string): number {
    const at = this.need(4, field);
    const b = this.bytes;
    return (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
  }

  /** An SFLOAT; the reserved value 0x0801 is never a valid reading (11073-20601 §A.5). */
  sfloat(field: string): Medfloat {
    const at = this.pos;
    const value = fromMderRaw(this.u16(field), SFLOAT);
    if (typeof value !== "number" && value.special === "reserved") {
      throw this.fail("E_CODEC_RESERVED", field, at, "SFLOAT 0x0801 is a reserved value");
    }
    return value;
  }

  /** A FLOAT; the reserved value 0x00800001 is never a valid reading. */
  float(field: string): Medfloat {
    const at = this.pos;
    const value = fromMderRaw(this.u32(field), FLOAT);
    if (typeof value !== "number" && value.special === "reserved") {
      throw this.fail("E_CODEC_RESERVED", field, at, "FLOAT 0x00800001 is a reserved value");
    }
    return value;
  }

  /** A GSS §3.70 Date Time, each part range-checked. */
  dateTime(field: string): DateTime {
    const at = this.pos;
    this.need(DATE_TIME_LENGTH, field);
    const b = this.bytes;
    const dt: DateTime = {
      year: b[at]! | (b[at + 1]! << 8),
      month: b[at + 2]!,
      day: b[at + 3]!,
      hours: b[at + 4]!,
      minutes: b[at + 5]!,
      seconds: b[at + 6]!,
    };
    const problem = dateTimeProblem(dt);
    if (problem !== undefined) {
      throw this.fail(
        "E_CODEC_RANGE",
        `${field}.${problem.part}`,
        at + problem.offset,
        problem.message,
      );
    }
    return dt;
  }

  /** `n` bytes as a view (no copy). */
  bytesOf(n: number, field: string): Uint8Array {
    const at = this.need(n, field);
    return this.bytes.subarray(at, at + n);
  }

  /** Moves back to an offset already read (to re-read a field another way). */
  seek(offset: number): void {
    if (offset < 0 || offset > this.pos)
      throw new RangeError(`seek to ${offset} outside 0–${this.pos}`);
    this.pos = offset;
  }

  /** Every byte left, as a view. */
  rest(): Uint8Array {
    const at = this.pos;
    this.pos = this.bytes.length;
    return this.bytes.subarray(at);
  }

  /** Fails with E_CODEC_LENGTH when bytes follow the last field read (or `after`). */
  end(after: string = this.lastField): void {
    if (this.pos !== this.bytes.length) {
      throw new RpmlabError(
        "E_CODEC_LENGTH",
        `${this.what}: ${this.bytes.length - this.pos} trailing byte(s) at byte ${this.pos} after ${after}`,
        { field: after, offset: this.pos },
      );
    }
  }
}

/**
 * A preallocated little-endian writer. Each codec keeps one, sized to its characteristic's
 * longest value, and calls `start()` before and `finish()` after each value; `finish()` copies
 * the written bytes out, so values never share memory with the writer.
 */
export class ByteWriter {
  private readonly buf: Uint8Array;
  private pos = 0;

  constructor(
    capacity: number,
    readonly what: string,
  ) {
    this.buf = new Uint8Array(capacity);
  }

  get offset(): number {
    return this.pos;
  }

  start(): this {
    this.pos = 0;
    return this;
  }

  finish(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }

  /** An error about a value being written to `field` (at the current offset). */
  fail(code: ErrorCode, field: string, message: string): RpmlabError {
    return new RpmlabError(code, `${this.what}: ${field}: ${message}`, {
      field,
      offset: this.pos,
    });
  }

  private room(n: number, field: string): number {
    const at = this.pos;
    if (at + n > this.buf.length) {
      throw this.fail("E_CODEC_LENGTH", field, `value longer than ${this.buf.length} bytes`);
    }
    this.pos = at + n;
    return at;
  }

  private int(v: number, min: number, max: number, field: string): void {
    if (!Number.isInteger(v) || v < min || v > max) {
      throw this.fail("E_CODEC_RANGE", field, `${v} is not an integer in ${min}–${max}`);
    }
  }

  u8(v: number, field: string): void {
    this.int(v, 0, 0xff, field);
    this.buf[this.room(1, field)] = v;
  }

  s8(v: number, field: string): void {
    this.int(v, -0x80, 0x7f, field);
    this.buf[this.room(1, field)] = v & 0xff;
  }

  u16(v: number, field: string): void {
    this.int(v, 0, 0xffff, field);
    this.raw16(v, field);
  }

  s16(v: number, field: string): void {
    this.int(v, -0x8000, 0x7fff, field);
    this.raw16(v & 0xffff, field);
  }

  u24(v: number, field: string): void {
    this.int(v, 0, 0xffffff, field);
    const at = this.room(3, field);
    this.buf[at] = v & 0xff;
    this.buf[at + 1] = (v >>> 8) & 0xff;
    this.buf[at + 2] = (v >>> 16) & 0xff;
  }

  u32(v: number, field: string): void {
    this.int(v, 0, 0xffffffff, field);
    this.raw32(v, field);
  }

  /** An SFLOAT written at the exponent nearest `preferredExponent` that carries it exactly. */
  sfloat(v: Medfloat, field: string, preferredExponent = 0): void {
    this.raw16(toMderRaw(v, preferredExponent, SFLOAT, this.what, field), field);
  }

  /** A FLOAT written at the exponent nearest `preferredExponent` that carries it exactly. */
  float(v: Medfloat, field: string, preferredExponent = 0): void {
    this.raw32(toMderRaw(v, preferredExponent, FLOAT, this.what, field), field);
  }

  dateTime(dt: DateTime, field: string): void {
    const problem = dateTimeProblem(dt);
    if (problem !== undefined) {
      throw this.fail("E_CODEC_RANGE", `${field}.${problem.part}`, problem.message);
    }
    const at = this.room(DATE_TIME_LENGTH, field);
    const b = this.buf;
    b[at] = dt.year & 0xff;
    b[at + 1] = dt.year >>> 8;
    b[at + 2] = dt.month;
    b[at + 3] = dt.day;
    b[at + 4] = dt.hours;
    b[at + 5] = dt.minutes;
    b[at + 6] = dt.seconds;
  }

  bytes(v: Uint8Array, field: string): void {
    this.buf.set(v, this.room(v.length, field));
  }

  private raw16(v: number, field: string): void {
    const at = this.room(2, field);
    this.buf[at] = v & 0xff;
    this.buf[at + 1] = (v >>> 8) & 0xff;
  }

  private raw32(v: number, field: string): void {
    const at = this.room(4, field);
    this.buf[at] = v & 0xff;
    this.buf[at + 1] = (v >>> 8) & 0xff;
    this.buf[at + 2] = (v >>> 16) & 0xff;
    this.buf[at + 3] = (v >>> 24) & 0xff;
  }
}
