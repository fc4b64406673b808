import { STATUS } from "../hci/constants.ts";
import type { VirtualController } from "./virtual-controller.ts";

/** What a handler decided: the status, return parameters after it, and what follows the reply. */
export interface Outcome {
  status: number;
  ret?: Buffer;
  /** Runs after the Command Complete/Status is sent, only on success. */
  after?: () => void;
}

export interface CommandEntry {
  /** Command Complete, or Command Status followed by later events (Vol 4 Part E §4.4). */
  kind: "complete" | "status";
  /** Exact parameter length; anything else is Invalid HCI Command Parameters (0x12). */
  length: number;
  /** Return parameter length after the status, zero-filled on errors so hosts can read them. */
  returnLength: number;
  run(ctl: VirtualController, p: Buffer): Outcome;
}

export const ok = (ret?: Buffer): Outcome =>
  ret === undefined ? { status: STATUS.SUCCESS } : { status: STATUS.SUCCESS, ret };
export const fail = (status: number, ret?: Buffer): Outcome =>
  ret === undefined ? { status } : { status, ret };
/** Return parameters that echo the command's Connection_Handle. */
export const handleRet = (p: Buffer): Buffer => p.subarray(0, 2);
