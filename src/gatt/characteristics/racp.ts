import { type ErrorCode, RpmlabError } from "../../core/errors.ts";
import { ByteReader, ByteWriter } from "../cursor.ts";
import type { DateTime } from "../date-time.ts";

/**
 * GSS §3.178 Record Access Control Point (0x2A52) as the Glucose Profile uses it, also the RACP
 * of our vendor records service: Op Code (uint8), Operator (uint8), Operand.
 *
 * Op codes (§3.178.1): 1 report stored records, 2 delete stored records, 3 abort operation,
 * 4 report number of stored records, 5 number of stored records response (operand uint16),
 * 6 response code (operand: request op code, response code value). Operators (§3.178.2): 0 null,
 * 1 all records, 2 ≤, 3 ≥, 4 within range of (inclusive), 5 first record, 6 last record. With
 * operators 2–4 the operand starts with a filter type (GLP: 1 sequence number, uint16; 2 user
 * facing time, Date Time) followed by one value (≤, ≥) or two (min, max).
 *
 * A request the server must refuse (unknown op code, wrong operator, bad operand) fails to decode
 * with an RpmlabError whose details carry `racpResponse`, the response code value to send back;
 * an error without one (a Date Time operand out of range) is answered with invalid_operand. A
 * range whose min exceeds its max decodes as sent: refusing it is the server's call.
 */

export const RACP_OP_CODES = {
  report_stored_records: 1,
  delete_stored_records: 2,
  abort_operation: 3,
  report_number_of_stored_records: 4,
  number_of_stored_records_response: 5,
  response_code: 6,
} as const;
export type RacpOpCode = keyof typeof RACP_OP_CODES;
/** Op codes that select records with an operator. */
export type RacpRecordOpCode =
  | "report_stored_records"
  | "delete_stored_records"
  | "report_number_of_stored_records";

const OPERATORS = [
  "null",
  "all_records",
  "less_than_or_equal_to",
  "greater_than_or_equal_to",
  "within_range_of",
  "first_record",
  "last_record",
] as const;
export type RacpOperator = (typeof OPERATORS)[number];

/** §3.178.4 Response Code Values; 0x0A (server busy) is from later GSS editions. */
export const RACP_RESPONSE_CODES = {
  success: 1,
  op_code_not_supported: 2,
  invalid_operator: 3,
  operator_not_supported: 4,
  invalid_operand: 5,
  no_records_found: 6,
  abort_unsuccessful: 7,
  procedure_not_completed: 8,
  operand_not_supported: 9,
  server_busy: 10,
} as const;
export type RacpResponseCode = keyof typeof RACP_RESPONSE_CODES;

/** ATT application errors a RACP server refuses a write with (before any RACP response). */
export interface RacpAttErrors {
  readonly procedureAlreadyInProgress: number;
  readonly cccdImproperlyConfigured: number;
}

/**
 * The Glucose Service defines its own (GLS 1.0 §1.6: 0x80 Procedure Already in Progress, 0x81
 * Client Characteristic Configuration Descriptor Improperly Configured); later services (PLXS
 * 1.0, rpmlab's vendor records service) use the common profile error codes of the Core
 * Specification Supplement (Part B §1.2: 0xFE, 0xFD). A glucose collector built to GLS reads
 * 0xFD/0xFE as an unknown application error.
 */
export function racpAttErrors(serviceUuid: string): RacpAttErrors {
  return serviceUuid.toUpperCase() === GLUCOSE_SERVICE
    ? { procedureAlreadyInProgress: 0x80, cccdImproperlyConfigured: 0x81 }
    : { procedureAlreadyInProgress: 0xfe, cccdImproperlyConfigured: 0xfd };
}
const GLUCOSE_SERVICE = "1808";

const FILTER_SEQUENCE = 1;
const FILTER_TIME = 2;

export type RacpFilter =
  | { readonly type: "sequence_number"; readonly value: number }
  | { readonly type: "user_facing_time"; readonly value: DateTime };
/** A range; min > max is carried as is (the server answers invalid_operand). */
export type RacpRange =
  | { readonly type: "sequence_number"; readonly min: number; readonly max: number }
  | { readonly type: "user_facing_time"; readonly min: DateTime; readonly max: DateTime };

export type RacpMessage =
  | {
      readonly opCode: RacpRecordOpCode;
      readonly operator: "all_records" | "first_record" | "last_record";
    }
  | {
      readonly opCode: RacpRecordOpCode;
      readonly operator: "less_than_or_equal_to" | "greater_than_or_equal_to";
      readonly filter: RacpFilter;
    }
  | {
      readonly opCode: RacpRecordOpCode;
      readonly operator: "within_range_of";
      readonly range: RacpRange;
    }
  | { readonly opCode: "abort_operation" }
  | { readonly opCode: "number_of_stored_records_response"; readonly count: number }
  | {
      readonly opCode: "response_code";
      /** The op code answered: its name, or the raw code when this profile does not define it. */
      readonly requestOpCode: RacpOpCode | number;
      readonly responseCode: RacpResponseCode;
    };

export const RACP_MAX_LENGTH = 3 + 2 * 7;
const NAME = "Record Access Control Point";
const writer = new ByteWriter(RACP_MAX_LENGTH, NAME);

function writeFilterValue(
  w: ByteWriter,
  type: RacpFilter["type"],
  v: number | DateTime,
  field: string,
) {
  if (type === "sequence_number") w.u16(v as number, field);
  else w.dateTime(v as DateTime, field);
}

function filterCode(w: ByteWriter, type: string): number {
  if (type === "sequence_number") return FILTER_SEQUENCE;
  if (type === "user_facing_time") return FILTER_TIME;
  throw w.fail(
    "E_CODEC_RANGE",
    "filter_type",
    `"${type}" is not sequence_number or user_facing_time`,
  );
}

export function encodeRacp(m: RacpMessage): Uint8Array {
  const w = writer.start();
  const op = (RACP_OP_CODES as Record<string, number | undefined>)[m.opCode];
  if (op === undefined) throw w.fail("E_CODEC_RANGE", "op_code", `"${m.opCode}" is not an op code`);
  w.u8(op, "op_code");
  switch (m.opCode) {
    case "abort_operation":
      w.u8(0, "operator");
      break;
    case "number_of_stored_records_response":
      w.u8(0, "operator");
      w.u16(m.count, "number_of_records");
      break;
    case "response_code": {
      w.u8(0, "operator");
      const req =
        typeof m.requestOpCode === "number" ? m.requestOpCode : RACP_OP_CODES[m.requestOpCode];
      w.u8(req, "request_op_code");
      const code = (RACP_RESPONSE_CODES as Record<string, number | undefined>)[m.responseCode];
      if (code === undefined) {
        throw w.fail("E_CODEC_RANGE", "response_code_value", `"${m.responseCode}" is not defined`);
      }
      w.u8(code, "response_code_value");
      break;
    }
    default: {
      const operator = OPERATORS.indexOf(m.operator);
      if (operator < 1)
        throw w.fail("E_CODEC_RANGE", "operator", `"${m.operator}" is not valid here`);
      w.u8(operator, "operator");
      if (m.operator === "within_range_of") {
        w.u8(filterCode(w, m.range.type), "filter_type");
        writeFilterValue(w, m.range.type, m.range.min, "operand.min");
        writeFilterValue(w, m.range.type, m.range.max, "operand.max");
      } else if (
        m.operator === "less_than_or_equal_to" ||
        m.operator === "greater_than_or_equal_to"
      ) {
        w.u8(filterCode(w, m.filter.type), "filter_type");
        writeFilterValue(w, m.filter.type, m.filter.value, "operand");
      }
    }
  }
  return w.finish();
}

function refuse(
  code: ErrorCode,
  field: string,
  offset: number,
  message: string,
  racpResponse: RacpResponseCode,
): RpmlabError {
  return new RpmlabError(code, `${NAME}: ${field} at byte ${offset}: ${message}`, {
    field,
    offset,
    racpResponse,
  });
}

function opCodeName(raw: number): RacpOpCode | undefined {
  for (const name of Object.keys(RACP_OP_CODES) as RacpOpCode[]) {
    if (RACP_OP_CODES[name] === raw) return name;
  }
  return undefined;
}

/** Fails unless exactly `n` operand bytes follow (invalid_operand otherwise). */
function expectOperand(r: ByteReader, n: number, what: string): void {
  if (r.remaining !== n) {
    throw refuse(
      r.remaining < n ? "E_CODEC_TRUNCATED" : "E_CODEC_LENGTH",
      "operand",
      r.offset,
      `${what} needs ${n} operand byte(s), got ${r.remaining}`,
      "invalid_operand",
    );
  }
}

export function decodeRacp(bytes: Uint8Array): RacpMessage {
  const r = new ByteReader(bytes, NAME);
  const rawOp = r.u8("op_code");
  const opCode = opCodeName(rawOp);
  if (opCode === undefined) {
    throw refuse(
      "E_CODEC_RESERVED",
      "op_code",
      0,
      `op code ${rawOp} is not a Glucose Profile RACP op code`,
      "op_code_not_supported",
    );
  }
  // The Operator is a field of every request (GSS §3.178): an op code alone names no operator
  // valid for it, Invalid Operator (0x03) as GLS servers answer it, not Invalid Operand.
  if (r.remaining === 0) {
    throw refuse(
      "E_CODEC_TRUNCATED",
      "operator",
      1,
      `op code ${opCode} needs an operator`,
      "invalid_operator",
    );
  }
  const rawOperator = r.u8("operator");
  const operator = OPERATORS[rawOperator];
  if (operator === undefined) {
    throw refuse(
      "E_CODEC_RESERVED",
      "operator",
      1,
      `operator ${rawOperator} is reserved`,
      "operator_not_supported",
    );
  }
  if (
    (operator === "null") !==
    (opCode === "abort_operation" ||
      opCode === "number_of_stored_records_response" ||
      opCode === "response_code")
  ) {
    throw refuse(
      "E_CODEC_RANGE",
      "operator",
      1,
      `operator ${operator} is not valid with op code ${opCode}`,
      "invalid_operator",
    );
  }
  switch (opCode) {
    case "abort_operation":
      expectOperand(r, 0, opCode);
      return { opCode };
    case "number_of_stored_records_response":
      expectOperand(r, 2, opCode);
      return { opCode, count: r.u16("number_of_records") };
    case "response_code": {
      expectOperand(r, 2, opCode);
      const rawReq = r.u8("request_op_code");
      const rawCode = r.u8("response_code_value");
      const responseCode = (Object.keys(RACP_RESPONSE_CODES) as RacpResponseCode[]).find(
        (k) => RACP_RESPONSE_CODES[k] === rawCode,
      );
      if (responseCode === undefined) {
        throw r.fail("E_CODEC_RESERVED", "response_code_value", 3, `value ${rawCode} is reserved`);
      }
      return { opCode, requestOpCode: opCodeName(rawReq) ?? rawReq, responseCode };
    }
    default:
      return decodeSelection(r, opCode, operator as Exclude<RacpOperator, "null">);
  }
}

/** The operator and operand of a request that selects records (op codes 1, 2, 4). */
function decodeSelection(
  r: ByteReader,
  opCode: RacpRecordOpCode,
  operator: Exclude<RacpOperator, "null">,
): RacpMessage {
  if (operator === "all_records" || operator === "first_record" || operator === "last_record") {
    expectOperand(r, 0, `operator ${operator}`);
    return { opCode, operator };
  }
  if (r.remaining === 0) {
    throw refuse(
      "E_CODEC_TRUNCATED",
      "filter_type",
      2,
      `operator ${operator} needs a filter type`,
      "invalid_operand",
    );
  }
  const rawFilter = r.u8("filter_type");
  if (rawFilter !== FILTER_SEQUENCE && rawFilter !== FILTER_TIME) {
    throw refuse(
      "E_CODEC_RESERVED",
      "filter_type",
      2,
      `filter type ${rawFilter} is not supported`,
      "operand_not_supported",
    );
  }
  const size = rawFilter === FILTER_SEQUENCE ? 2 : 7;
  const count = operator === "within_range_of" ? 2 : 1;
  expectOperand(r, size * count, `filter type ${rawFilter} with operator ${operator}`);
  if (operator === "within_range_of") {
    const range: RacpRange =
      rawFilter === FILTER_SEQUENCE
        ? { type: "sequence_number", min: r.u16("operand.min"), max: r.u16("operand.max") }
        : {
            type: "user_facing_time",
            min: r.dateTime("operand.min"),
            max: r.dateTime("operand.max"),
          };
    return { opCode, operator, range };
  }
  const filter: RacpFilter =
    rawFilter === FILTER_SEQUENCE
      ? { type: "sequence_number", value: r.u16("operand") }
      : { type: "user_facing_time", value: r.dateTime("operand") };
  return { opCode, operator, filter };
}
