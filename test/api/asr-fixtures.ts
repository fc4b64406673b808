import { SupplyCatalogue } from "../../src/asr/supply-catalogue.ts";
import type { AsrDeps } from "../../src/asr/supply-requests.ts";
import { DEFAULT_FULFILMENT_CONFIG } from "../../src/config/fulfilment-config.ts";
import type { Lab } from "./helpers.ts";
import { catalogue } from "./hwi-fixtures.ts";

/** The ASR services' dependencies over a test lab: its store, clock and events, as serve's. */
export function asrDeps(lab: Pick<Lab, "store" | "clock" | "events">): AsrDeps {
  return {
    store: lab.store,
    clock: lab.clock,
    supplies: SupplyCatalogue.load(undefined, catalogue),
    catalogue,
    events: lab.events,
    fulfilment: DEFAULT_FULFILMENT_CONFIG,
  };
}
