import type { Catalogue } from "../catalogue/catalogue.ts";
import { RpmlabError } from "../core/errors.ts";
import { parseIso } from "../core/time.ts";
import type { GatewayStatusPayload } from "../mqtt/envelope.ts";
import type { Uplink } from "../mqtt/uplink.ts";
import type { Store, StoreRepositories } from "../store/store.ts";
import {
  type GatewayRow,
  type GatewayStatus,
  type HeldWhitelistEntry,
  heldKey,
  type WhitelistRow,
} from "../store/types-hardware.ts";
import type { DeadLetterRow, MeasurementRow, NewMeasurement } from "../store/types-ingest.ts";
import { recordStoredMeasurements } from "../webhooks/outbox.ts";
import type { BatchResult, MessageOutcome, StoredMeasurement } from "./events.ts";
import { deadLetterOf, type Inbound, type Prepared, prepare, reasonOf } from "./prepare.ts";
import { Resolver } from "./resolve.ts";
import { readingRows } from "./rows.ts";

export interface ProcessorDeps {
  readonly store: Store;
  readonly catalogue: Catalogue;
}

/**
 * Commits batches of received messages, one transaction each: MessageProcessor in this thread,
 * or WorkerProcessor in a worker thread of its own (worker-processor.ts).
 */
export interface BatchProcessor {
  start(): Promise<void>;
  /** Resolves once committed; rejects with the store's error, nothing of the batch kept. */
  process(batch: readonly Inbound[]): Promise<BatchResult>;
  stop(): Promise<void>;
}

/** A dead letter to write, for the message at `index` of the batch. */
interface PendingDeadLetter {
  readonly index: number;
  readonly prepared: Prepared;
  readonly reason: string;
  readonly messageId: string | null;
  /** An uplink's: its message id was claimed (this batch, or held by the dead letter replayed). */
  readonly holdsClaim: boolean;
}

/** A status message applied to its gateway; `held`, the whitelist a check-in reported. */
interface AppliedStatus {
  readonly index: number;
  readonly prepared: Extract<Prepared, { kind: "status" }>;
  readonly gateway: GatewayRow;
  readonly held: readonly HeldWhitelistEntry[] | undefined;
}

/**
 * The message handler of the ingestion core, without MQTT: a batch of received messages in,
 * one store transaction (DESIGN "Uplink": decode → validate → dedupe → store), a BatchResult
 * out. Every message ends stored, recognised as already ingested, applied (status) or
 * dead-lettered with its reason; the only exception is a store failure, which rolls the whole
 * batch back so it can be retried (nothing of it was acknowledged).
 */
export class MessageProcessor implements BatchProcessor {
  constructor(private readonly deps: ProcessorDeps) {}

  async start(): Promise<void> {}

  async stop(): Promise<void> {}

  process(batch: readonly Inbound[]): Promise<BatchResult> {
    const prepared = batch.map(prepare);
    return this.deps.store.transaction((tx) => this.apply(tx, prepared));
  }

  private async apply(tx: StoreRepositories, prepared: readonly Prepared[]): Promise<BatchResult> {
    // A replayed dead letter goes in this transaction, whatever becomes of its message: stored,
    // already ingested, or kept again as a new dead letter with the new reason. One already
    // gone was deleted or replayed meanwhile: its message is not ingested twice.
    const gone = new Set<number>();
    for (const [index, p] of prepared.entries()) {
      const replays = p.inbound.replays;
      if (replays !== undefined && !(await tx.deadLetters.delete(replays.deadLetterId))) {
        gone.add(index);
      }
    }
    const uplinks = prepared.flatMap((p, index) =>
      p.kind === "uplink" && !gone.has(index) ? [p] : [],
    );
    // A replay whose dead letter holds its message's claim uses it (README "Dead letters").
    const fresh = uplinks.filter((p) => p.inbound.replays?.holdsClaim !== true);
    // Messages refused before they parse claim their id too when sender and id are known: the
    // same bytes redelivered (QoS 1 after a lost PUBACK) are one dead letter, not two.
    const freshKeys = [
      ...fresh.map((p) => claimKey(p.uplink)),
      ...prepared.flatMap((p, index) =>
        p.kind === "dead" &&
        p.claimKey !== null &&
        !gone.has(index) &&
        p.inbound.replays?.holdsClaim !== true
          ? [p.claimKey]
          : [],
      ),
    ];
    const resolver = await Resolver.load(
      tx,
      this.deps.catalogue,
      uplinks.map((p) => p.uplink),
    );
    // Idempotent on the message id, per sender (ids are unique per gateway or IMEI); the DUP
    // flag of a redelivery is not trusted (STYLE "Pitfalls"). A copy later in the batch finds
    // its id taken by the first.
    const claimed =
      freshKeys.length === 0
        ? new Set<string>()
        : await tx.ingestedMessages.claimMany(freshKeys, prepared.at(-1)!.inbound.receivedAt);
    const outcomes: (MessageOutcome | undefined)[] = [];
    const rows: NewMeasurement[] = [];
    /** Batch index of the message each row came from. */
    const owners: number[] = [];
    const dead: PendingDeadLetter[] = [];
    const gateways: GatewayRow[] = [];
    const relayedBy = new Set<string>();
    const statuses: AppliedStatus[] = [];
    for (const [index, p] of prepared.entries()) {
      if (gone.has(index)) {
        outcomes[index] = { kind: "gone", deadLetterId: p.inbound.replays!.deadLetterId };
      } else if (p.kind === "dead") {
        const held = p.inbound.replays?.holdsClaim === true;
        if (p.claimKey !== null && !held && !claimed.delete(p.claimKey)) {
          outcomes[index] = { kind: "redelivered", messageId: p.messageId! };
          continue;
        }
        dead.push({
          index,
          prepared: p,
          reason: p.reason,
          messageId: p.messageId,
          holdsClaim: p.claimKey !== null,
        });
      } else if (p.kind === "ignored") {
        outcomes[index] = { kind: "ignored", reason: p.reason };
      } else if (p.kind === "status") {
        const gateway = await tx.gateways.updateStatus(
          p.gatewayUuid,
          statusFields(p.status, p.inbound.receivedAt),
        );
        gateways.push(gateway);
        // Spec 2.3: the whitelist the gateway reports holding is its acknowledgement (RE → CO).
        const held =
          p.status.online && p.status.whitelist !== undefined
            ? p.status.whitelist.map((d) => ({
                macAddress: d.mac_address,
                sensorCode: d.sensor_code,
              }))
            : undefined;
        statuses.push({ index, prepared: p, gateway, held });
      } else {
        const { uplink, inbound } = p;
        const held = inbound.replays?.holdsClaim === true;
        if (!held && !claimed.delete(claimKey(uplink))) {
          outcomes[index] = { kind: "redelivered", messageId: uplink.messageId };
          continue;
        }
        if (uplink.source.kind === "gateway") relayedBy.add(uplink.source.gatewayUuid);
        // By the reading's index in the payload, in its order, the schema's refusals included.
        const problems = new Map<number, string>(p.refused.map((r) => [r.index, r.reason]));
        for (const [n, reading] of uplink.readings.entries()) {
          const at = p.positions[n] ?? n;
          const resolution = resolver.resolve(uplink.source, reading);
          if ("problem" in resolution) {
            problems.set(at, reasonOf(resolution.problem));
            continue;
          }
          try {
            const leftOut: string[] = [];
            const made = readingRows(uplink, reading, resolution.ok, inbound.receivedAt, (e) =>
              leftOut.push(`${reasonOf(e)}; left out, the reading's other records stored`),
            );
            if (made.length === 0) {
              throw new RpmlabError("E_CODEC_MAPPING", "the values decode to no metric record", {
                field: "values",
              });
            }
            for (const row of made) {
              rows.push(row);
              owners.push(index);
            }
            // A value past the profile's range measured with the reading's main one (a cuff's
            // pulse): the reading is stored without it, and the message kept as a dead letter
            // naming it (README "Real hardware").
            if (leftOut.length > 0) problems.set(at, leftOut.join("; "));
          } catch (error) {
            problems.set(at, reasonOf(error));
          }
        }
        outcomes[index] = {
          kind: "uplink",
          messageId: uplink.messageId,
          stored: 0,
          duplicates: 0,
          deadLetter: null,
        };
        if (problems.size > 0) {
          dead.push({
            index,
            prepared: p,
            reason: [...problems]
              .sort(([a], [b]) => a - b)
              .map(([at, why]) => `readings.${at}: ${why}`)
              .join("; "),
            messageId: uplink.messageId,
            holdsClaim: true,
          });
        }
      }
    }

    await this.reconcileWhitelists(tx, statuses, outcomes);

    const { inserted, duplicates } =
      rows.length === 0 ? { inserted: [], duplicates: [] } : await tx.measurements.insertMany(rows);
    const stats = new Map<number, { stored: number; duplicates: number }>();
    const stat = (i: number) => stats.get(i) ?? stats.set(i, { stored: 0, duplicates: 0 }).get(i)!;
    for (const owner of owners) stat(owner).stored++;
    for (const position of duplicates) {
      const s = stat(owners[position]!);
      s.stored--;
      s.duplicates++;
    }
    // Spec 2.2 last_measurement: the newest reading each gateway relayed in this batch, no later
    // than it arrived — a device clock set ahead would otherwise pin it in the future, first in
    // `ordering=-last_measurement` for good.
    const latest = new Map<string, number>();
    for (const row of inserted) {
      if (!relayedBy.has(row.hardwareUuid)) continue; // direct-cellular: no gateway
      const at = Math.min(row.timestamp, row.created);
      latest.set(row.hardwareUuid, Math.max(latest.get(row.hardwareUuid) ?? at, at));
    }
    await tx.gateways.recordMeasurements(latest);
    // Issue 4 §1: the measurement webhooks' outbox, in this transaction; one entry per account.
    await recordStoredMeasurements(tx, inserted);

    const deadLetters: DeadLetterRow[] = [];
    for (const d of dead) {
      const row = await tx.deadLetters.add({
        topic: d.prepared.inbound.topic,
        ...deadLetterOf(d.prepared.inbound, d.reason),
        received: d.prepared.inbound.receivedAt,
        messageId: d.messageId,
        holdsClaim: d.holdsClaim,
      });
      deadLetters.push(row);
      const outcome = outcomes[d.index];
      outcomes[d.index] =
        outcome?.kind === "uplink"
          ? { ...outcome, deadLetter: row }
          : { kind: "dead_letter", deadLetter: row };
    }
    for (const [index, s] of stats) {
      const outcome = outcomes[index];
      if (outcome?.kind === "uplink") outcomes[index] = { ...outcome, ...s };
    }
    return {
      outcomes: outcomes as MessageOutcome[],
      stored: inserted.map(announced),
      deadLetters,
      gateways,
    };
  }

  /** Spec 2.3 for a batch's check-ins, one whitelist read for all; then their outcomes. */
  private async reconcileWhitelists(
    tx: StoreRepositories,
    statuses: readonly AppliedStatus[],
    outcomes: (MessageOutcome | undefined)[],
  ): Promise<void> {
    const reports = statuses.flatMap(({ prepared, held }) =>
      held === undefined ? [] : [{ gatewayUuid: prepared.gatewayUuid, held }],
    );
    const reconciled = reports.length === 0 ? [] : await tx.whitelist.reconcile(reports);
    let next = 0;
    for (const { index, prepared, gateway, held } of statuses) {
      const whitelistHeld = held !== undefined && holdsExactly(held, reconciled[next++]!.whitelist);
      outcomes[index] = {
        kind: "status",
        gateway,
        online: prepared.status.online,
        whitelistHeld,
        receivedAt: prepared.inbound.receivedAt,
        checkinAt: prepared.status.online ? parseIso(prepared.status.checkin_at)! : null,
      };
    }
  }
}

function announced(row: MeasurementRow): StoredMeasurement {
  return {
    id: row.id,
    accountId: row.accountId,
    deviceId: row.deviceId,
    hardwareUuid: row.hardwareUuid,
    metric: row.metric,
    timestamp: row.timestamp,
  };
}

/** What a message id is claimed as: ids are unique per gateway or IMEI, not across them. */
function claimKey(uplink: Uplink): string {
  const sender = uplink.source.kind === "gateway" ? uplink.source.gatewayUuid : uplink.source.imei;
  return `${sender}/${uplink.messageId}`;
}

/**
 * Spec 2.2 / 2.3 fields of a status payload; the last will only zeroes the signal. The check-in
 * time is the service's receipt of it (spec 2.2 "last connection to the service network"), not
 * the gateway's `checkin_at`: a gateway whose clock is off would otherwise show a connection in
 * the future, or one an hour old and its signal as stale.
 */
function statusFields(status: GatewayStatusPayload, receivedAt: number): GatewayStatus {
  if (!status.online) return { lastSignalStrength: 0 };
  return {
    lastSignalStrength: status.signal_strength,
    lastCheckinTime: receivedAt,
    firmwareVersion: status.firmware_version,
    bootloaderVersion: status.bootloader_version,
    provisioned: status.provisioned,
  };
}

/** The gateway holds exactly the service's whitelist entries (addresses and sensor codes). */
function holdsExactly(
  held: readonly HeldWhitelistEntry[],
  entries: readonly WhitelistRow[],
): boolean {
  const mine = new Set(entries.map(heldKey));
  const theirs = new Set(held.map(heldKey));
  return mine.size === theirs.size && [...theirs].every((key) => mine.has(key));
}
