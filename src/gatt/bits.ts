import type { ByteReader, ByteWriter } from "./cursor.ts";

/** Named one-bit flags of a status or feature field, as a typed object of booleans. */
export type BitFlags<K extends string> = { readonly [P in K]: boolean };

/**
 * A status or feature bit field held as data: flag name → bit position, as the GSS tables list
 * them. Bits not in the table are reserved for future use (RFU): writers leave them 0 and readers
 * reject values that set them (E_CODEC_FLAGS), naming the field and byte offset.
 */
export class BitTable<K extends string> {
  readonly names: readonly K[];
  /** Every defined bit. */
  readonly mask: number;
  /** Every flag false, in table order: unpack copies it, so decoded objects share one shape. */
  private readonly allFalse: BitFlags<K>;

  constructor(readonly positions: Readonly<Record<K, number>>) {
    this.names = Object.keys(positions) as K[];
    let mask = 0;
    const allFalse = {} as Record<K, boolean>;
    for (const name of this.names) {
      mask |= 1 << positions[name];
      allFalse[name] = false;
    }
    this.mask = mask >>> 0;
    this.allFalse = allFalse;
  }

  pack(flags: BitFlags<K>): number {
    let raw = 0;
    for (const name of this.names) if (flags[name] === true) raw |= 1 << this.positions[name];
    // Bit fields here are at most 32 bits wide; >>> 0 keeps bit 31 unsigned.
    return raw >>> 0;
  }

  unpack(raw: number): BitFlags<K> {
    const flags = { ...this.allFalse } as Record<K, boolean>;
    if (raw === 0) return flags;
    for (const name of this.names) if ((raw >>> this.positions[name]) & 1) flags[name] = true;
    return flags;
  }

  /** Every flag false. */
  none(): BitFlags<K> {
    return this.unpack(0);
  }

  /** Reads a `bytes`-wide field and rejects reserved bits. */
  read(r: ByteReader, bytes: 1 | 2 | 3 | 4, field: string): BitFlags<K> {
    const at = r.offset;
    const raw = readUint(r, bytes, field);
    rejectReserved(r, raw, this.mask, field, at);
    return this.unpack(raw);
  }

  write(w: ByteWriter, bytes: 1 | 2 | 3 | 4, flags: BitFlags<K>, field: string): void {
    writeUint(w, bytes, this.pack(flags), field);
  }
}

export function readUint(r: ByteReader, bytes: 1 | 2 | 3 | 4, field: string): number {
  switch (bytes) {
    case 1:
      return r.u8(field);
    case 2:
      return r.u16(field);
    case 3:
      return r.u24(field);
    default:
      return r.u32(field);
  }
}

export function writeUint(w: ByteWriter, bytes: 1 | 2 | 3 | 4, v: number, field: string): void {
  if (bytes === 1) w.u8(v, field);
  else if (bytes === 2) w.u16(v, field);
  else if (bytes === 3) w.u24(v, field);
  else w.u32(v, field);
}

/** Throws E_CODEC_FLAGS when `raw` sets bits outside `allowed` (RFU bits). */
export function rejectReserved(
  r: ByteReader,
  raw: number,
  allowed: number,
  field: string,
  offset: number,
): void {
  const reserved = (raw & ~allowed) >>> 0;
  if (reserved !== 0) {
    throw r.fail(
      "E_CODEC_FLAGS",
      field,
      offset,
      `reserved bits 0x${reserved.toString(16).padStart(2, "0")} are set (RFU, must be 0)`,
    );
  }
}

/** A lookup between wire codes and names, for enumerated fields (meal, sample location, …). */
export class CodeTable<N extends string> {
  private readonly byCode = new Map<number, N>();

  constructor(readonly codes: Readonly<Record<N, number>>) {
    for (const name of Object.keys(codes) as N[]) this.byCode.set(codes[name], name);
  }

  /** Reads the code as `raw` and names it, rejecting reserved codes with E_CODEC_RESERVED. */
  name(r: ByteReader, raw: number, field: string, offset: number): N {
    const name = this.byCode.get(raw);
    if (name === undefined) {
      throw r.fail("E_CODEC_RESERVED", field, offset, `value ${raw} is reserved for future use`);
    }
    return name;
  }

  code(w: ByteWriter, name: N, field: string): number {
    const code = (this.codes as Record<string, number | undefined>)[name];
    if (code === undefined || !Object.hasOwn(this.codes, name)) {
      throw w.fail(
        "E_CODEC_RANGE",
        field,
        `"${String(name)}" is not one of ${Object.keys(this.codes).join(", ")}`,
      );
    }
    return code;
  }
}
