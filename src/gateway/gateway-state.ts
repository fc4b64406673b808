import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RpmlabError } from "../core/errors.ts";
import type { HeldDevice } from "./device-rules.ts";

/**
 * What a gateway keeps across a restart besides its outbox: the whitelist it holds (it enforces
 * it before the service sends it again) and, per device, the highest record sequence it has
 * relayed (RACP then asks only for newer records: readings are not fetched twice). One JSON file
 * beside the outbox, replaced atomically (write, then rename); in memory without a directory.
 */
export interface GatewayStateData {
  readonly held: readonly HeldDevice[];
  readonly lastSequences: Readonly<Record<string, number>>;
}

export class GatewayState {
  private data: GatewayStateData = { held: [], lastSequences: {} };

  private constructor(private readonly file: string | undefined) {}

  /** The state of gateway `name` in `dir` (empty when none was saved), or in memory. */
  static open(dir: string | undefined, name: string): GatewayState {
    const state = new GatewayState(dir === undefined ? undefined : join(dir, `${name}.state.json`));
    if (state.file !== undefined) {
      let text: string | undefined;
      try {
        text = readFileSync(state.file, "utf8");
      } catch (error) {
        if ((error as { code?: unknown }).code !== "ENOENT") throw unreadable(state.file, error);
      }
      if (text !== undefined) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch (error) {
          throw unreadable(state.file, error);
        }
        state.data = checked(parsed, state.file);
      }
    }
    return state;
  }

  get held(): readonly HeldDevice[] {
    return this.data.held;
  }

  lastSequence(mac: string): number | undefined {
    return this.data.lastSequences[mac];
  }

  /**
   * Takes the update in memory, then writes the file: E_OUTBOX_UNAVAILABLE naming it when the
   * write fails (a full disk), the update still held in memory and the old file left whole.
   */
  save(update: Partial<GatewayStateData>): void {
    this.data = { ...this.data, ...update };
    if (this.file === undefined) return;
    const tmp = `${this.file}.tmp`;
    try {
      // Beside the outbox, and like it the owner's only (src/core/directory.ts createPrivateFile).
      // The mode applies only to a file the write creates: a temp file a crashed save left
      // (another mode, or a link) goes first, and "wx" refuses one that reappears meanwhile.
      rmSync(tmp, { force: true });
      writeFileSync(tmp, JSON.stringify(this.data), { mode: 0o600, flag: "wx" });
      renameSync(tmp, this.file);
    } catch (error) {
      throw new RpmlabError(
        "E_OUTBOX_UNAVAILABLE",
        `cannot write the gateway state ${this.file}: ${(error as Error).message}`,
        { field: "outbox", value: this.file },
        error,
      );
    }
  }

  setLastSequence(mac: string, sequence: number): void {
    this.save({ lastSequences: { ...this.data.lastSequences, [mac]: sequence } });
  }
}

/**
 * The state as saved, or E_OUTBOX_UNAVAILABLE naming the first field at fault (a hand-edited
 * or damaged file): taken unchecked, a `held` that is not a list threw a bare TypeError, and an
 * entry without its address was reported to the service in every check-in.
 */
function checked(parsed: unknown, file: string): GatewayStateData {
  const bad = (field: string) =>
    new RpmlabError(
      "E_OUTBOX_UNAVAILABLE",
      `cannot read the gateway state ${file}: ${field} is not what a gateway keeps there`,
      { field, value: file },
    );
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw bad("(root)");
  const { held = [], lastSequences = {} } = parsed as Record<string, unknown>;
  if (!Array.isArray(held)) throw bad("held");
  held.forEach((d: unknown, i) => {
    const entry = (typeof d === "object" && d !== null ? d : {}) as Record<string, unknown>;
    if (typeof entry.mac !== "string" || !/^[0-9A-F]{12}$/.test(entry.mac)) {
      throw bad(`held[${i}].mac`);
    }
    if (typeof entry.sensorCode !== "string") throw bad(`held[${i}].sensorCode`);
    const sensorId = entry.sensorId ?? null;
    if (sensorId !== null && typeof sensorId !== "string") {
      throw bad(`held[${i}].sensorId`);
    }
  });
  if (typeof lastSequences !== "object" || lastSequences === null || Array.isArray(lastSequences)) {
    throw bad("lastSequences");
  }
  for (const [mac, seq] of Object.entries(lastSequences)) {
    if (!Number.isInteger(seq)) throw bad(`lastSequences.${mac}`);
  }
  return {
    held: held as HeldDevice[],
    lastSequences: lastSequences as Record<string, number>,
  };
}

function unreadable(file: string, error: unknown): RpmlabError {
  return new RpmlabError(
    "E_OUTBOX_UNAVAILABLE",
    `cannot read the gateway state ${file}: ${(error as Error).message}`,
    { field: "outbox", value: file },
    error,
  );
}
