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

export function parseBleSpec(spec: string): BleSpec {
  const text = spec.trim();
  if (text === "emulated") return { kind: "emulated" };
  const hci = /^hci:?(\d{1,3})$/.exec(text);
  if (hci !== null) return { kind: "hci", devId: Number(hci[1]) };
  if (text.startsWith("tcp://")) {
    const { host, port } = parseTcp(spec, text, false);
    return { kind: "tcp", host, port };
  }
  throw invalid(spec, HELP);
}

/** `tcp://host:port` for a listener: port 0 takes any free port. */
export function parseListenSpec(spec: string): { host: string; port: number } {
  if (!spec.trim().startsWith("tcp://")) throw invalid(spec, "expected tcp://host:port");
  return parseTcp(spec, spec.trim(), true);
}

function parseTcp(spec: string, text: string, allowZero: boolean): { host: string; port: number } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid(spec, HELP);
  }
  const port = url.port === "" ? Number.NaN : Number(url.port);
  if (
    url.hostname === "" ||
    !Number.isInteger(port) ||
    port < (allowZero ? 0 : 1) ||
    port > 65_535
  ) {
    throw invalid(
      spec,
      `needs a host and a port${allowZero ? " (0: any free port)" : ""}, e.g. tcp://127.0.0.1:6402`,
    );
  }
  if (url.pathname !== "" && url.pathname !== "/") throw invalid(spec, "takes no path");
  return { host: url.hostname.replace(/^\[|\]$/g, ""), port };
}

function invalid(spec: string, message: string): RpmlabError {
  return new RpmlabError("E_CONFIG_INVALID", `BLE transport "${spec}": ${message}`, {
    field: "ble",
  });
}
