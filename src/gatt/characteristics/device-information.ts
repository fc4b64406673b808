import { RpmlabError } from "../../core/errors.ts";
import { firstInvalidUtf8 } from "../../core/utf8.ts";
import { SIG } from "../uuids.ts";

/**
 * Device Information Service (0x180A) strings: GSS Manufacturer Name String (0x2A29), Model
 * Number String (0x2A24), Serial Number String (0x2A25), Firmware Revision String (0x2A26),
 * Hardware Revision String (0x2A27), Software Revision String (0x2A28). Each is a read-only UTF-8
 * string of the whole value, without terminator; an attribute value is at most 512 bytes (Core
 * Vol 3 Part F §3.2.9).
 */
export const DEVICE_INFORMATION_STRINGS = {
  [SIG.characteristics.manufacturerName]: "Manufacturer Name String",
  [SIG.characteristics.modelNumber]: "Model Number String",
  [SIG.characteristics.serialNumber]: "Serial Number String",
  [SIG.characteristics.firmwareRevision]: "Firmware Revision String",
  [SIG.characteristics.hardwareRevision]: "Hardware Revision String",
  [SIG.characteristics.softwareRevision]: "Software Revision String",
} as const;
export type DeviceInformationUuid = keyof typeof DEVICE_INFORMATION_STRINGS;

const MAX_ATTRIBUTE_LENGTH = 512;
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

function nameOf(uuid: string): string {
  const name = (DEVICE_INFORMATION_STRINGS as Record<string, string | undefined>)[uuid];
  if (name === undefined) {
    throw new RpmlabError("E_CODEC_UNKNOWN", `${uuid} is not a Device Information string`, {
      field: "uuid",
    });
  }
  return name;
}

export function encodeDeviceInformationString(
  uuid: DeviceInformationUuid,
  text: string,
): Uint8Array {
  const name = nameOf(uuid);
  const bytes = encoder.encode(text);
  if (bytes.length > MAX_ATTRIBUTE_LENGTH) {
    throw new RpmlabError(
      "E_CODEC_LENGTH",
      `${name}: ${bytes.length} bytes is over the ${MAX_ATTRIBUTE_LENGTH}-byte attribute limit`,
      { field: "value", offset: MAX_ATTRIBUTE_LENGTH },
    );
  }
  return bytes;
}

export function decodeDeviceInformationString(
  uuid: DeviceInformationUuid,
  bytes: Uint8Array,
): string {
  const name = nameOf(uuid);
  if (bytes.length > MAX_ATTRIBUTE_LENGTH) {
    throw new RpmlabError(
      "E_CODEC_LENGTH",
      `${name}: ${bytes.length} bytes is over the ${MAX_ATTRIBUTE_LENGTH}-byte attribute limit`,
      { field: "value", offset: MAX_ATTRIBUTE_LENGTH },
    );
  }
  // WHATWG decoding refuses what RFC 3629 §4 does: overlong forms, surrogates, over U+10FFFF.
  const bad = firstInvalidUtf8(bytes);
  if (bad < bytes.byteLength) {
    throw new RpmlabError("E_CODEC_RANGE", `${name}: value at byte ${bad} is not valid UTF-8`, {
      field: "value",
      offset: bad,
    });
  }
  return decoder.decode(bytes);
}
