/** The scenario ledger's record key (src/scenario/run/ledger.ts), which drills count with too. */
export { type KeyedRecord, recordKey } from "../../src/scenario/run/ledger.ts";
