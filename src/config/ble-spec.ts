import { RpmlabError } from "../core/errors.ts";

/**
 * The BLE transport boundary's spec strings (DESIGN.md, "Boundaries"): `emulated` (a virtual
 * controller in this process), `tcp://host:port` (H4 to a controller in another process, such
 * as `rpmlab controller --listen`), `hci:N` (the real adapter hciN through the native socket).
 */
export type BleSpec =
  | { readonly kind: "emulated" }
  | { readonly kind: "tcp"; readonly host: string; readonly port: number }
  | { readonly kind: "hci"; readonly devId: number };

export const DEFAULT_BLE = "emulated";
const HELP = "expected emulated, tcp://host:port or hci:N (N = adapter number, as in hciconfig)";

/** `option` names the flag (or field) in the error. */
export function parseBleSpec(spec: string, option = "--ble"): BleSpec {
  const text = spec.trim();
  if (text === "emulated") return { kind: "emulated" };
  const hci = /^hci:?(\d{1,3})$/.exec(text);
  if (hci !== null) return { kind: "hci", devId: Number(hci[1]) };
  if (text.startsWith("tcp://")) return { kind: "tcp", ...parseTcp(option, spec, 1) };
  throw invalid(option, spec, HELP);
}

/** `tcp://host:port` for a listener: port 0 takes any free port. */
export function parseListenSpec(spec: string, option = "--listen"): { host: string; port: number } {
  if (!spec.trim().startsWith("tcp://")) throw invalid(option, spec, "expected tcp://host:port");
  return parseTcp(option, spec, 0);
}

/** The `tcp://host:port` spec of a host and port, as parseBleSpec takes it back ([IPv6]). */
export function formatTcpSpec(host: string, port: number): string {
  return `tcp://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** Host (a name, IPv4, or [IPv6]) and port, nothing after but an optional "/". */
const TCP = /^tcp:\/\/(\[[^\]]*\]|[^:/[\]]+):(\d+)\/?$/;

function parseTcp(option: string, spec: string, lowestPort: 0 | 1): { host: string; port: number } {
  const m = TCP.exec(spec.trim());
  if (m === null) {
    throw invalid(
      option,
      spec,
      `needs a host and a port${lowestPort === 0 ? " (0: any free port)" : ""}, e.g. tcp://127.0.0.1:6402`,
    );
  }
  const port = Number(m[2]);
  if (port < lowestPort || port > 65_535) {
    throw invalid(option, spec, `port ${m[2]} is not from ${lowestPort} to 65535`);
  }
  return { host: m[1]!.replace(/^\[|\]$/g, ""), port };
}

function invalid(option: string, spec: string, message: string): RpmlabError {
  return new RpmlabError("E_CONFIG_INVALID", `${option} "${spec}": ${message}`, {
    field: option.replace(/^--/, ""),
  });
}
