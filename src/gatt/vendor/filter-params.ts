import { RpmlabError } from "../../core/errors.ts";
import { firstInvalidUtf8 } from "../../core/utf8.ts";
import type { FilterParams, FilterParamValue } from "../../readings/types.ts";
import { rejectReserved } from "../bits.ts";
import type { ByteReader, ByteWriter } from "../cursor.ts";
import { checkParamValue, isPositiveUint32 } from "../filter-values.ts";
import { MAX_TEXT_BYTES, type MetricLayout, type ParamLayout } from "./schema.ts";

/**
 * The filter params section of a vendor record (layout in record.ts): a presence byte (bit i =
 * the metric's i-th filter param, in the profile's order), then each present value by its wire
 * form: uint32; enum index uint8; mac48 as 6 bytes, least significant octet first (as BLE sends
 * addresses); text as uint8 length + UTF-8; flags as one uint8 of 0/1 flags (bit j = j-th bit
 * flag) followed by a uint32 per integer flag.
 */

const MAC = /^[0-9A-F]{12}$/;
const HEX = "0123456789ABCDEF";
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8");

function mapping(what: string, field: string, message: string): RpmlabError {
  return new RpmlabError("E_CODEC_MAPPING", `${what}: ${field}: ${message}`, { field });
}

export function writeFilterParams(
  w: ByteWriter,
  layout: MetricLayout,
  params: FilterParams | null,
): void {
  const name = layout.metric.name;
  const list = layout.params;
  if (list.length === 0) {
    if (params !== null) {
      throw mapping(w.what, `${name}.filter_params`, `${name} carries no filter params; use null`);
    }
    return;
  }
  if (params === null || typeof params !== "object") {
    const keys = list.map((p) => p.key).join(", ");
    throw mapping(w.what, `${name}.filter_params`, `${name} carries ${keys}; got null`);
  }
  let presence = 0;
  let present = 0;
  for (let i = 0; i < list.length; i++) {
    const p = list[i]!;
    if (params[p.key] !== undefined) {
      presence |= 1 << i;
      present++;
    } else if (!p.optional) {
      throw mapping(w.what, p.field, "missing");
    }
  }
  if (Object.keys(params).length !== present) {
    const extra = Object.keys(params).filter((k) => !list.some((p) => p.key === k));
    throw mapping(w.what, `${name}.filter_params`, `${name} does not carry ${extra.join(", ")}`);
  }
  w.u8(presence, "filter_params.presence");
  for (let i = 0; i < list.length; i++) {
    const p = list[i]!;
    const value = params[p.key];
    if (value === undefined) continue;
    writeParam(w, p, checkParamValue(p.spec, name, value, w.what, p.field), p.field);
  }
}

function writeParam(w: ByteWriter, p: ParamLayout, value: FilterParamValue, field: string): void {
  switch (p.wire) {
    case "uint32":
      w.u32(value as number, field);
      return;
    case "enum_index":
      w.u8((p.spec as { values: string[] }).values.indexOf(value as string), field);
      return;
    case "mac48": {
      const mac = value as string;
      if (!MAC.test(mac))
        throw w.fail("E_CODEC_RANGE", field, `${mac} is not 12 upper-case hex digits`);
      for (let i = 10; i >= 0; i -= 2) {
        w.u8(HEX.indexOf(mac[i]!) * 16 + HEX.indexOf(mac[i + 1]!), field);
      }
      return;
    }
    case "text":
      writeText(w, value as string, field);
      return;
    case "flags": {
      const flags = value as Readonly<Record<string, number>>;
      let bits = 0;
      for (let j = 0; j < p.bitFlags.length; j++) if (flags[p.bitFlags[j]!] === 1) bits |= 1 << j;
      w.u8(bits, field);
      for (const flag of p.intFlags) w.u32(flags[flag]!, `${field}.${flag}`);
    }
  }
}

/** uint8 length + UTF-8; ASCII (serial numbers) is written char by char, without an encoder. */
function writeText(w: ByteWriter, text: string, field: string): void {
  let ascii = text.length <= MAX_TEXT_BYTES;
  for (let i = 0; ascii && i < text.length; i++) ascii = text.charCodeAt(i) < 0x80;
  if (ascii) {
    w.u8(text.length, field);
    for (let i = 0; i < text.length; i++) w.u8(text.charCodeAt(i), field);
    return;
  }
  const bytes = encoder.encode(text);
  if (bytes.length > MAX_TEXT_BYTES)
    throw w.fail("E_CODEC_RANGE", field, `over ${MAX_TEXT_BYTES} bytes`);
  w.u8(bytes.length, field);
  w.bytes(bytes, field);
}

export function readFilterParams(r: ByteReader, layout: MetricLayout): FilterParams {
  const name = layout.metric.name;
  const list = layout.params;
  const at = r.offset;
  const presence = r.u8("filter_params.presence");
  rejectReserved(r, presence, (1 << list.length) - 1, "filter_params.presence", at);
  const params: Record<string, FilterParamValue> = {};
  for (let i = 0; i < list.length; i++) {
    const p = list[i]!;
    if (presence & (1 << i)) params[p.key] = readParam(r, p, name);
    else if (!p.optional) {
      throw r.fail("E_CODEC_FLAGS", p.field, at, "required but its presence bit is 0");
    }
  }
  return params;
}

function readParam(r: ByteReader, p: ParamLayout, metric: string): FilterParamValue {
  const field = p.field;
  const at = r.offset;
  switch (p.wire) {
    case "uint32": {
      const v = r.u32(field);
      if (v === 0) throw r.fail("E_CODEC_RANGE", field, at, "0 is not a positive integer");
      return v;
    }
    case "enum_index": {
      const index = r.u8(field);
      const v = (p.spec as { values: string[] }).values[index];
      if (v === undefined)
        throw r.fail("E_CODEC_RANGE", field, at, `enum index ${index} is out of range`);
      return v;
    }
    case "mac48": {
      let mac = "";
      for (let i = 0; i < 6; i++) {
        const b = r.u8(field);
        mac = HEX[b >>> 4]! + HEX[b & 0xf]! + mac;
      }
      // The profile's pattern may be narrower than "any MAC".
      return checkParamValue(p.spec, metric, mac, r.what, field, at);
    }
    case "text":
      return checkParamValue(p.spec, metric, readText(r, field, at), r.what, field, at);
    case "flags": {
      const bits = r.u8(field);
      rejectReserved(r, bits, (1 << p.bitFlags.length) - 1, field, at);
      const flags: Record<string, number> = {};
      for (let j = 0; j < p.bitFlags.length; j++) flags[p.bitFlags[j]!] = (bits >>> j) & 1;
      for (const flag of p.intFlags) {
        const f = `${field}.${flag}`;
        const v = r.u32(f);
        if (!isPositiveUint32(v))
          throw r.fail("E_CODEC_RANGE", f, r.offset - 4, `${v} is not a positive integer`);
        flags[flag] = v;
      }
      return flags;
    }
  }
}

/** Char codes of the ASCII text being read, reused so reading allocates only the string. */
const codes: number[] = [];

function readText(r: ByteReader, field: string, at: number): string {
  const length = r.u8(field);
  if (length > MAX_TEXT_BYTES)
    throw r.fail("E_CODEC_RANGE", field, at, `length ${length} is over ${MAX_TEXT_BYTES}`);
  const start = r.offset;
  codes.length = 0;
  for (let i = 0; i < length; i++) {
    const c = r.u8(field);
    if (c >= 0x80) return decodeUtf8(r, start, length, field);
    codes.push(c);
  }
  return String.fromCharCode.apply(null, codes);
}

/**
 * The slow path for non-ASCII text: rewind and decode the whole value as UTF-8, refusing it at
 * the first byte that starts no valid character (core/utf8.ts, as Device Information strings).
 */
function decodeUtf8(r: ByteReader, start: number, length: number, field: string): string {
  r.seek(start);
  const bytes = r.bytesOf(length, field);
  const bad = firstInvalidUtf8(bytes);
  if (bad < bytes.length) {
    throw r.fail("E_CODEC_RANGE", field, start + bad, "not valid UTF-8");
  }
  return decoder.decode(bytes);
}
