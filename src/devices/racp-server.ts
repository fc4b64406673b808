import { isRpmlabError } from "../core/errors.ts";
import {
  decodeRacp,
  encodeRacp,
  RACP_OP_CODES,
  type RacpMessage,
  type RacpOpCode,
  type RacpResponseCode,
} from "../gatt/characteristics/racp.ts";
import { sequenceAtOrAfter } from "../gatt/record-sequence.ts";
import { lastSequenceOf, type RecordStore, type StoredRecord } from "./record-store.ts";

/**
 * How the RACP server reaches the central: sends a stored record's values (from record sequence
 * `from` on, for a reading whose first records a ≥ n request leaves out), and RACP indications.
 */
export interface RacpOutput {
  sendRecord(record: StoredRecord, from?: number): Promise<void>;
  indicate(value: Uint8Array): Promise<void>;
}

type Selecting = Extract<RacpMessage, { operator: string }>;

/**
 * The server side of the Record Access Control Point (GSS §3.178; GLP 1.0 §4.6 procedures):
 * report stored records, report the number of stored records, delete stored records and abort,
 * with operators all / ≤ / ≥ / within range / first / last over sequence numbers. One procedure
 * runs at a time; a second write while one runs is refused by the caller with ATT 0xFE.
 */
export class RacpServer {
  private running = false;
  private aborted = false;

  constructor(
    private readonly store: RecordStore,
    private readonly out: RacpOutput,
  ) {}

  get busy(): boolean {
    return this.running;
  }

  /** Handles one written value; resolves when the procedure's final indication is sent. */
  async handle(value: Uint8Array): Promise<void> {
    // Op codes 5 and 6 go from the server only (GSS §3.178.1): written to it, they are an op
    // code it does not take, whatever operator or operand follows.
    const written = value[0];
    if (
      written === RACP_OP_CODES.number_of_stored_records_response ||
      written === RACP_OP_CODES.response_code
    ) {
      await this.respond(written, "op_code_not_supported");
      return;
    }
    let message: RacpMessage;
    try {
      message = decodeRacp(value);
    } catch (error) {
      const code = isRpmlabError(error)
        ? (error.details.racpResponse as RacpResponseCode | undefined)
        : undefined;
      await this.respond(value[0] ?? 0, code ?? "invalid_operand");
      return;
    }
    if (message.opCode === "abort_operation") {
      this.aborted = this.running;
      await this.respond("abort_operation", "success");
      return;
    }
    // Only selecting requests are left (the server's own op codes were answered above).
    if (!("operator" in message)) return;
    const chosen = this.choose(message);
    if (typeof chosen === "string") {
      await this.respond(message.opCode, chosen);
      return;
    }
    switch (message.opCode) {
      case "report_number_of_stored_records":
        await this.out.indicate(
          encodeRacp({ opCode: "number_of_stored_records_response", count: chosen.length }),
        );
        return;
      case "delete_stored_records":
        this.store.remove(chosen);
        await this.respond(
          "delete_stored_records",
          chosen.length === 0 ? "no_records_found" : "success",
        );
        return;
      case "report_stored_records":
        await this.report(
          chosen,
          message.operator === "greater_than_or_equal_to" &&
            message.filter.type === "sequence_number"
            ? message.filter.value
            : undefined,
        );
        return;
    }
  }

  private async report(chosen: readonly StoredRecord[], from?: number): Promise<void> {
    if (chosen.length === 0) {
      await this.respond("report_stored_records", "no_records_found");
      return;
    }
    this.running = true;
    this.aborted = false;
    let sent = true;
    try {
      for (const record of chosen) {
        if (this.aborted) break;
        await this.out.sendRecord(record, from);
      }
    } catch {
      // A record that could not go out (longer than the central's ATT_MTU − 3, or the link
      // dropped: then the response goes nowhere either) ends the report as GSS §3.178.4 has
      // it, 0x08 "unable to complete a procedure for any reason", not in silence.
      sent = false;
    } finally {
      this.running = false;
    }
    if (!sent) await this.respond("report_stored_records", "procedure_not_completed");
    // An aborted report ends with the abort's own response (GLP §4.6.3.4).
    else if (!this.aborted) await this.respond("report_stored_records", "success");
  }

  /**
   * The records a procedure's operator and operand select, or why none can be: a filter this
   * server does not keep (User Facing Time: its records are found by sequence number only) is
   * operand_not_supported (GSS §3.178.4, 0x09); a range whose minimum exceeds its maximum,
   * invalid_operand (0x05).
   */
  private choose(m: Selecting): StoredRecord[] | "operand_not_supported" | "invalid_operand" {
    switch (m.operator) {
      case "all_records":
        return [...this.store.all()];
      case "first_record":
        return this.store.all().slice(0, 1);
      case "last_record":
        return this.store.all().slice(-1);
      case "less_than_or_equal_to":
      case "greater_than_or_equal_to": {
        if (m.filter.type !== "sequence_number") return "operand_not_supported";
        const n = m.filter.value;
        return m.operator === "less_than_or_equal_to"
          ? this.store.select((r) => sequenceAtOrAfter(n, r.sequence))
          : // A reading of several records (Vendor Records) is chosen while any of them is ≥ n.
            this.store.select((r) => sequenceAtOrAfter(lastSequenceOf(r), n));
      }
      case "within_range_of": {
        if (m.range.type !== "sequence_number") return "operand_not_supported";
        if (m.range.min > m.range.max) return "invalid_operand";
        const { min, max } = m.range;
        return this.store.select(
          (r) => sequenceAtOrAfter(r.sequence, min) && sequenceAtOrAfter(max, r.sequence),
        );
      }
    }
  }

  private respond(request: RacpOpCode | number, code: RacpResponseCode): Promise<void> {
    return this.out.indicate(
      encodeRacp({ opCode: "response_code", requestOpCode: request, responseCode: code }),
    );
  }
}
