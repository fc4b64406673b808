import type { FulfilmentConfig } from "../config/fulfilment-config.ts";
import type { FulfilmentStatus } from "../fulfilment/statuses.ts";
import type { WebhookEvent } from "../store/types-ingest.ts";
import type { DeliveryState } from "../store/types-webhooks.ts";
import type { Comparator } from "./comparators.ts";
import type { ReadingCounter } from "./expectations.ts";
import type { Selector } from "./selectors.ts";

/**
 * A scenario as the runner reads it: every reference checked, times in milliseconds, selectors
 * resolved against their cohort, comparators parsed, events sorted by time. Built by
 * resolve.ts from a file that passed schema.ts.
 */
export interface Scenario {
  /** The file it was read from (as given to the loader). */
  readonly file: string;
  readonly name: string;
  readonly description: string | undefined;
  readonly seed: number | string;
  readonly clock: ScenarioClock;
  readonly durationMs: number;
  /** Spec strings, each accepted by its parser (ble: "direct" or parseBleSpec). */
  readonly transports: { readonly ble: string; readonly broker: string; readonly store: string };
  readonly accounts: readonly ScenarioAccount[];
  readonly cohorts: readonly Cohort[];
  /** The defaults with the file's `fulfilment` settings over them. */
  readonly fulfilment: FulfilmentConfig;
  /** Sorted by atMs; events at the same time keep their order in the file. */
  readonly events: readonly ScenarioEvent[];
  readonly expectations: readonly Expectation[];
}

export interface ScenarioClock {
  /** Epoch ms of clock.start. */
  readonly startMs: number;
  /** max: as fast as possible; realtime: 1; a number: virtual ms per wall ms. */
  readonly speed: "max" | "realtime" | number;
}

export interface ScenarioAccount {
  readonly id: string;
  readonly name: string | undefined;
  readonly stripStatusMetrics: boolean;
  /** The ASR module is on (spec 4.5); with thresholds, automatic reorder too (spec 1.4). */
  readonly asr:
    | {
        readonly autoReorder:
          | {
              readonly strips_below?: number;
              readonly days_below?: number;
              readonly supply_name?: string;
            }
          | undefined;
      }
    | undefined;
  readonly webhooks: readonly ScenarioWebhook[];
}

export interface ScenarioWebhook {
  /** Unique within the scenario. */
  readonly id: string;
  /** The account's id. */
  readonly account: string;
  readonly events: readonly WebhookEvent[];
  /** "lab": a receiver the runner hosts and can fault; otherwise an http(s) URL. */
  readonly url: string;
  readonly postAsArray: boolean;
  readonly enabledByDefault: boolean;
  readonly auth: { readonly header: string; readonly key: string } | undefined;
  readonly sign: boolean;
}

export interface Cohort {
  readonly id: string;
  readonly account: string;
  readonly count: number;
  /** A patient model name (profiles/patients). */
  readonly model: string;
  /** Current device profile names (legacy names resolved), one device of each per patient. */
  readonly kit: readonly string[];
  readonly connectivity: "gateway" | "cellular";
  readonly onboarding: "active" | "ordered";
  readonly adherence: number | undefined;
  /** "HH:MM" local times for every device of the kit; undefined: the model's schedule. */
  readonly schedule: readonly string[] | undefined;
  /** IANA zones, given to patients in turn (patient i gets timeZones[i % length]). */
  readonly timeZones: readonly string[];
  /** Gateway cohorts: each gateway's check-in period; undefined: the gateway's own default. */
  readonly checkinEveryMs: number | undefined;
}

export interface Address {
  readonly street: string;
  readonly city: string;
  readonly state: string;
  readonly zip: string;
}

/** What happens; `device` undefined means every device of the kit. */
export type ScenarioAction =
  | { readonly action: "broker.restart" }
  | { readonly action: "broker.outage"; readonly forMs: number }
  | { readonly action: "ingestion.restart" }
  | { readonly action: "gateway.outage"; readonly target: Selector; readonly forMs: number }
  | { readonly action: "gateway.replace"; readonly target: Selector }
  | { readonly action: "gateway.unlink"; readonly target: Selector }
  | { readonly action: "cellular.outage"; readonly target: Selector; readonly forMs: number }
  | {
      readonly action: "device.out_of_range";
      readonly target: Selector;
      readonly forMs: number;
      readonly device: string | undefined;
    }
  | {
      readonly action: "device.battery_dead";
      readonly target: Selector;
      readonly device: string | undefined;
      /** undefined: dead until the end of the run. */
      readonly forMs: number | undefined;
    }
  | {
      readonly action: "device.clock_drift";
      readonly target: Selector;
      readonly device: string | undefined;
      /** Signed: positive moves the device clock ahead. */
      readonly driftMs: number;
    }
  | {
      readonly action: "device.duplicate_burst";
      readonly target: Selector;
      readonly device: string | undefined;
      readonly count: number;
    }
  | { readonly action: "webhook.down"; readonly webhook: string; readonly forMs: number }
  | {
      readonly action: "webhook.slow";
      readonly webhook: string;
      readonly delayMs: number;
      readonly forMs: number;
    }
  | {
      readonly action: "webhook.error";
      readonly webhook: string;
      readonly status: number;
      readonly forMs: number;
    }
  | {
      readonly action: "radio.interference";
      /** undefined: every gateway cohort. */
      readonly target: Selector | undefined;
      readonly loss: number;
      readonly forMs: number;
    }
  | { readonly action: "api.create_patient"; readonly account: string; readonly count: number }
  | { readonly action: "api.activate_device"; readonly target: Selector; readonly device: string }
  | { readonly action: "api.order_device"; readonly target: Selector; readonly device: string }
  | { readonly action: "api.change_address"; readonly target: Selector; readonly address: Address }
  | {
      readonly action: "api.request";
      readonly account: string;
      readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
      readonly path: string;
      readonly body: unknown;
      /** The status the answer must have; undefined: any 2xx. */
      readonly status: number | undefined;
    };

export type ScenarioEvent = ScenarioAction & {
  /** Milliseconds after clock.start. */
  readonly atMs: number;
  /** The `at` text as written. */
  readonly at: string;
  /** Where it is in the file, e.g. "events[3]". */
  readonly source: string;
};

export type ExpectationCheck =
  | { readonly kind: "readings"; readonly counter: ReadingCounter; readonly cmp: Comparator }
  | {
      readonly kind: "webhooks";
      readonly event: WebhookEvent;
      readonly status: DeliveryState;
      /** undefined: deliveries to every webhook. */
      readonly webhook: string | undefined;
      readonly cmp: Comparator;
    }
  | { readonly kind: "fulfilment"; readonly status: FulfilmentStatus; readonly cmp: Comparator }
  | {
      readonly kind: "api";
      readonly account: string;
      readonly path: string;
      readonly status: number;
      /** undefined: only the status is checked. */
      readonly count: Comparator | undefined;
    };

/**
 * One check. A readings item naming several counters becomes one expectation per counter, in
 * the order of READING_COUNTERS.
 */
export type Expectation = ExpectationCheck & {
  /** The item's `text`, or a generated one such as "readings.stored >= 100". */
  readonly text: string;
  /** Where it is in the file, e.g. "expect[2]". */
  readonly source: string;
};
