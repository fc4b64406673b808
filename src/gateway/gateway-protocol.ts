import type { SessionResult, SessionTimeouts } from "./ble-session.ts";
import type { RawCharacteristicValue } from "./raw-values.ts";
import type { WhitelistEntry } from "./whitelist.ts";

/** Lab → gateway worker. */
export type GatewayRequest = {
  id: number;
  type: "visit";
  /** Visit the first advertiser the whitelist admits. */
  whitelist: WhitelistEntry[];
  /** Highest record sequence held per device address. */
  lastSequences: Record<string, number>;
  lingerMs: number;
  timeouts?: Partial<SessionTimeouts>;
  /** How long to scan for an admitted advertiser, ms. */
  scanTimeoutMs: number;
};

/** Gateway worker → lab. */
export type GatewayMessage =
  | { type: "ready"; address: string }
  | { type: "failed"; message: string }
  | { type: "value"; value: RawCharacteristicValue }
  | { id: number; type: "visited"; address: string; rssi: number; result: SessionResult }
  | { id: number; type: "error"; message: string; code: string | undefined };
