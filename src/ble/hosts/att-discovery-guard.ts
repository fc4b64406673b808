/**
 * Discovery responses whose handles noble would loop on (Vol 3 Part G §4.4.1, §4.6.1). noble
 * asks for the next part of a discovery from the last handle it got: after a service's End
 * Group Handle, after a characteristic's value handle. (The lab never has noble discover
 * descriptors by Find Information.) An entry ending before it starts, or before the range asked
 * for, had it ask for the same range again, and a peripheral answering the same had noble loop
 * until the gateway's discovery timeout ended the session. Entries whose UUID is neither 16 nor
 * 128 bits (Vol 3 Part G §3.3.1, §4.4.1) had noble read past the response and throw, its request
 * left awaiting a response for ever. Such a response ends the discovery here, naming the fault.
 */

const READ_BY_TYPE_REQUEST = 0x08;
const READ_BY_GROUP_TYPE_REQUEST = 0x10;
const CHARACTERISTIC = 0x2803;

const hex = (handle: number): string => `0x${handle.toString(16).padStart(4, "0")}`;

/**
 * What is wrong with the handles of `response` to discovery request `request`, or undefined when
 * they advance within the range asked for (or the request is no discovery noble pages through).
 * The L2CAP guard has already checked that the entries fill the response.
 */
export function discoveryFault(request: Buffer, response: Buffer): string | undefined {
  const opcode = request[0];
  if (response[0] !== (opcode ?? 0) + 1 || request.length < 5) return undefined;
  const start = request.readUInt16LE(1);
  const end = request.readUInt16LE(3);
  if (opcode === READ_BY_GROUP_TYPE_REQUEST) return servicesFault(response, start);
  if (opcode === READ_BY_TYPE_REQUEST && request.length === 7) {
    return request.readUInt16LE(5) === CHARACTERISTIC
      ? characteristicsFault(response, start, end)
      : undefined;
  }
  return undefined;
}

/** Read By Group Type Response: Attribute Handle, End Group Handle, value (§3.4.4.10). */
function servicesFault(response: Buffer, start: number): string | undefined {
  const size = response[1]!;
  if (size !== 6 && size !== 20) return `services listed in entries of ${size} octets, not 6 or 20`;
  let next = start;
  for (let at = 2; at + size <= response.length; at += size) {
    const first = response.readUInt16LE(at);
    const last = response.readUInt16LE(at + 2);
    if (first < next) return `service at handle ${hex(first)} comes before ${hex(next)}`;
    if (last < first)
      return `service at handle ${hex(first)} ends at ${hex(last)}, before it starts`;
    next = last + 1;
  }
  return undefined;
}

/** Read By Type Response of «Characteristic»: declaration handle, properties, value handle (§3.3.1). */
function characteristicsFault(response: Buffer, start: number, end: number): string | undefined {
  const size = response[1]!;
  if (size !== 7 && size !== 21) {
    return `characteristics listed in entries of ${size} octets, not 7 or 21`;
  }
  let next = start;
  for (let at = 2; at + size <= response.length; at += size) {
    const declaration = response.readUInt16LE(at);
    const value = response.readUInt16LE(at + 3);
    const where = `characteristic at handle ${hex(declaration)}`;
    if (declaration < next || declaration > end) {
      return `${where} is outside ${hex(next)}–${hex(end)}`;
    }
    if (value <= declaration || value > end) {
      return `${where} has its value at ${hex(value)}, not after it within ${hex(end)}`;
    }
    next = value + 1;
  }
  return undefined;
}

/** Who waits on the discovery of each peripheral, by its address (CentralLink.discover). */
const watchers = new Map<string, (fault: string) => void>();

/** Tells the discovery of this peripheral, if one is watched, what ended it. */
export function noteDiscoveryFault(address: string, fault: string): void {
  watchers.get(address)?.(fault);
}

/** Calls `onFault` when a malformed response ends a discovery of this peripheral; returns the unwatch. */
export function watchDiscoveryFaults(
  address: string,
  onFault: (fault: string) => void,
): () => void {
  watchers.set(address, onFault);
  return () => {
    if (watchers.get(address) === onFault) watchers.delete(address);
  };
}
