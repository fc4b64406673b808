import { Lab, type LabDeps, type LabInfo, type LabParts, shutdownIncomplete } from "../app/lab.ts";
import { BtsnoopWriter, fileSink } from "../ble/btsnoop.ts";
import { Catalogue } from "../catalogue/catalogue.ts";
import { DEFAULT_FULFILMENT_CONFIG, type FulfilmentConfig } from "../config/fulfilment-config.ts";
import { serveConfig } from "../config/serve-config.ts";
import { redactStoreSpec } from "../config/store-spec.ts";
import { WholeMillisecondClock } from "../core/clock.ts";
import { createLogger } from "../core/logger.ts";
import { Rng } from "../core/rng.ts";
import { startStopwatch } from "../core/stopwatch.ts";
import { MS_PER_MINUTE, toIsoMicros } from "../core/time.ts";
import { VirtualClock } from "../core/virtual-clock.ts";
import { PatientModels } from "../readings/patients.ts";
import type { WebhookEvent } from "../store/types-ingest.ts";
import { scenarioDigest } from "./digest.ts";
import { DRAIN_LIMIT_MS, DRAIN_MS } from "./drain.ts";
import { evaluate } from "./evaluate.ts";
import { type Observed, resultCount } from "./observed.ts";
import type { Progress } from "./progress.ts";
import { LabReceiver } from "./receiver.ts";
import { rate, type ScenarioReport } from "./report.ts";
import { setUpAccount } from "./run/account-setup.ts";
import { perform } from "./run/actions.ts";
import { DeadLetterTally } from "./run/dead-letter-tally.ts";
import { emptyStoreOnly } from "./run/empty-store.ts";
import { FaultLayers } from "./run/fault-layers.ts";
import { Fleet } from "./run/fleet.ts";
import { HeldWork } from "./run/held-work.ts";
import { LabClient } from "./run/lab-client.ts";
import { countReadings } from "./run/reading-counts.ts";
import { RefusedEvents } from "./run/refused.ts";
import { StoreWatch } from "./run/store-watch.ts";
import { checkTransports } from "./run/transports.ts";
import { countWebhooks } from "./run/webhook-counts.ts";
import type { Scenario } from "./types.ts";

export interface RunOptions {
  /** Overrides the scenario's seed (`rpmlab run --seed`). */
  readonly seed?: string | number;
  readonly progress?: Progress;
  /** The lab's HTTP port (default 0: any free port) and host. */
  readonly port?: number;
  readonly host?: string;
  /** Called once the lab is up and the fleet enrolled: where to reach it. */
  readonly onReady?: (ready: RunReady) => void;
  /** Ends the run early (Ctrl-C in `rpmlab demo`): it reports what happened until then. */
  readonly signal?: AbortSignal;
  /**
   * `rpmlab run --btsnoop FILE`: the HCI traffic of every controller of a run on emulated BLE,
   * in one btsnoop file (virtual timestamps).
   */
  readonly btsnoop?: string;
  /** Opens the lab's store from `transports.store` (default: openStore; see LabDeps). */
  readonly openStore?: LabDeps["openStore"];
  /**
   * Wall ms the store may fail every commit of ingestion before the run ends with its error
   * (default STORE_FAILURE_LIMIT_MS; the rule: run/store-watch.ts).
   */
  readonly storeFailureLimitMs?: number;
}

/** What a running scenario's lab offers (`rpmlab demo` prints it). */
export interface RunReady {
  readonly lab: LabInfo;
  /** Where the scenario's own receiver takes webhooks with `url: lab`, per webhook id. */
  readonly receiverUrls: Readonly<Record<string, string>>;
}

/** Virtual time per step of the run: devices, gateways and the lab settle between steps. */
const STEP_MS = 10 * MS_PER_MINUTE;

/** Runs `scenario` to its end and reports what happened against what it expects. */
export async function runScenario(
  scenario: Scenario,
  options: RunOptions = {},
): Promise<ScenarioReport> {
  const run = new ScenarioRun(scenario, options);
  let report: ScenarioReport;
  try {
    report = await run.execute();
  } catch (error) {
    // The run's own failure is the one to report; the lab still stops.
    await run.close().catch(() => undefined);
    throw error;
  }
  await run.close();
  return report;
}

/**
 * One run of a scenario (issue 7 §2): `rpmlab serve`'s composition (src/app/lab.ts) on a
 * VirtualClock at the scenario's start, a webhook receiver for `url: lab`, the cohorts' patients
 * enrolled through the HWI API with their gateways and devices (run/fleet.ts), the timed events,
 * then the clock driven to the end in steps, each followed by the network I/O it caused.
 */
class ScenarioRun {
  private readonly seed: string | number;
  private readonly rng: Rng;
  private readonly clock: VirtualClock;
  private readonly catalogue = Catalogue.load();
  private receiver: LabReceiver | undefined;
  private lab: Lab | undefined;
  private fleet: Fleet | undefined;
  private client: LabClient | undefined;
  private storeWatch: StoreWatch | undefined;
  private deadLetters: DeadLetterTally | undefined;
  private capture: BtsnoopWriter | undefined;
  private readonly held = new HeldWork();
  private readonly faultsInForce = new FaultLayers();
  private readonly refused = new RefusedEvents();
  private faults = 0;
  /** Scenario webhook id → the HWI webhook ids registered for it, by event. */
  private readonly webhooks = new Map<string, Map<WebhookEvent, string>>();
  /** Order id → fulfilment statuses it reached. */
  private readonly orders = new Map<string, Set<string>>();

  /**
   * Virtual time per step: STEP_MS, or a wall second's worth at a finite speed, so that a run
   * watched at demo speed stops within about a second of being asked to — below 1× too (at
   * 0.01×, 10 virtual ms: a virtual second would hold a Ctrl-C for 100 wall seconds). Below
   * 0.001× the step is a virtual ms, longer than a wall second: the clock's wait ends on the
   * run's signal instead.
   */
  private get step(): number {
    return Math.max(1, Math.min(STEP_MS, Math.round(this.clock.speed * 1000)));
  }

  constructor(
    private readonly scenario: Scenario,
    private readonly options: RunOptions,
  ) {
    this.seed = options.seed ?? scenario.seed;
    this.rng = new Rng(`scenario/${this.seed}`);
    const { speed } = scenario.clock;
    this.clock = new VirtualClock({
      startMs: scenario.clock.startMs,
      speed: speed === "max" ? Number.POSITIVE_INFINITY : speed === "realtime" ? 1 : speed,
    });
  }

  async execute(): Promise<ScenarioReport> {
    const { scenario } = this;
    checkTransports(scenario, this.options);
    const elapsed = startStopwatch();
    this.receiver = await LabReceiver.start();
    const client = await this.startLab();
    this.storeWatch = new StoreWatch({
      events: this.parts.ingestor.events,
      store: redactStoreSpec(scenario.transports.store),
      clock: this.clock,
      limitMs: this.options.storeFailureLimitMs,
      signal: this.options.signal,
    });
    this.deadLetters = new DeadLetterTally(this.parts.ingestor.events);
    this.parts.events.on("fulfilment.status", (e) => this.reached(e.device.id, e.status));
    this.parts.events.on("replacement.status", (e) => this.reached(e.replacement.id, e.status));
    const domains = new Map(scenario.accounts.map((a) => [a.id, a.id]));
    for (const account of scenario.accounts) {
      const registered = await setUpAccount(client, account, (id) => this.receiver!.url(id));
      for (const [id, events] of registered) this.webhooks.set(id, events);
    }
    const fleet = new Fleet({
      scenario,
      clock: this.clock,
      client,
      rng: this.rng.fork("fleet"),
      catalogue: this.catalogue,
      patients: PatientModels.load(),
      brokerUrl: this.parts.broker.url,
      domains,
    });
    this.fleet = fleet;
    if (this.options.btsnoop !== undefined) {
      // Before enrolment: every controller of the run, from its first HCI command on.
      this.capture = new BtsnoopWriter(fileSink(this.options.btsnoop), () => this.clock.now());
      fleet.radio!.captureTo(this.capture);
    }
    this.parts.events.on("hardware.delivered", (event) => this.held.add(fleet.delivered(event)));
    await fleet.enrol();
    for (const event of scenario.events) {
      this.clock.schedule(scenario.clock.startMs + event.atMs, () => {
        // Counted once it took effect: a fault the lab refused (refused.ts) did not run.
        const counted = () => {
          if (event.action.startsWith("api.") === false) this.faults++;
        };
        this.held.add(
          this.refused.watch(
            event,
            perform(
              {
                clock: this.clock,
                fleet,
                lab: () => this.parts,
                client,
                catalogue: this.catalogue,
                rng: this.rng.fork("actions"),
                domains,
                setFault: (webhook, fault) => this.receiver!.setFault(webhook, fault),
                hold: (work) => this.held.add(work),
                faults: this.faultsInForce,
              },
              event,
            ).then(counted),
          ),
        );
      });
    }
    const receiverUrls: Record<string, string> = {};
    for (const account of scenario.accounts) {
      for (const w of account.webhooks) {
        if (w.url === "lab") receiverUrls[w.id] = this.receiver.url(w.id);
      }
    }
    this.options.onReady?.({ lab: client.info, receiverUrls });
    const end = scenario.clock.startMs + scenario.durationMs;
    await this.pump(end);
    // Past the end: what waits in outboxes and retries drains; nothing new is measured. As fast
    // as the lab goes whatever the scenario's speed: two virtual hours would take two wall hours
    // after a realtime run.
    this.clock.setSpeed(Number.POSITIVE_INFINITY);
    await this.pump(end + DRAIN_MS);
    while (
      this.options.signal?.aborted !== true &&
      fleet.queued > 0 &&
      this.clock.now() < end + DRAIN_LIMIT_MS
    ) {
      await this.pump(this.clock.now() + this.step);
    }
    // What the store failed is committed before the counts, or the run ends with its error.
    await this.storeWatch.recovered();
    // Stopped early (Ctrl-C in rpmlab demo): the report covers what ran.
    const reached = this.options.signal?.aborted === true ? Math.min(end, this.clock.now()) : end;
    return this.report(client, reached, elapsed());
  }

  async close(): Promise<void> {
    this.storeWatch?.close();
    this.deadLetters?.close();
    await this.fleet?.stop().catch(() => undefined);
    await this.client?.close();
    const failed = (await this.lab?.stop()) ?? [];
    await this.receiver?.close();
    // Last, so the lab stops whatever happens: the fleet's radio closed the capture (buffered
    // records written) unless its stop failed first; a capture that could not be written fails
    // the run here rather than leaving a short file behind a passing report.
    this.capture?.close();
    // As `rpmlab serve` (README "rpmlab serve"): a store left unflushed is no clean end.
    if (failed.length > 0) throw shutdownIncomplete(failed, "the lab stopped");
  }

  private get parts(): LabParts {
    return this.lab!.running;
  }

  private async startLab(): Promise<LabClient> {
    const { transports, durationMs } = this.scenario;
    const config = serveConfig(
      {
        store: transports.store,
        broker: transports.broker === "embedded" ? "embedded:0" : transports.broker,
        port: String(this.options.port ?? 0),
        ...(this.options.host === undefined ? {} : { host: this.options.host }),
        clientDomain: this.scenario.accounts[0]!.id,
        // No admin token: the lab makes a fresh one, as for `serve`. The seed reproduces the
        // run, not its credentials: it is printed and shipped in scenario files, and a token
        // drawn from it would open the admin API of every lab run with it (`demo --host`).
      },
      {},
    );
    this.lab = new Lab(
      {
        ...config,
        fulfilment: this.fulfilmentConfig(),
        idSeed: `scenario/${this.seed}/ids`,
        webhookRetentionMs: durationMs + 2 * DRAIN_LIMIT_MS,
        // Every write in this lab nudges the dispatcher; the poll only catches retries' timers
        // it armed itself, so it can be rare.
        webhookPollMs: STEP_MS,
        // The run's store has no other writer.
        scheduleResyncMs: 0,
      },
      createLogger({ level: "silent" }),
      // The store keeps epoch ms as integers; emulated BLE's timing is finer (clock.ts).
      new WholeMillisecondClock(this.clock),
      { openStore: emptyStoreOnly(this.options.openStore) },
    );
    this.client = new LabClient(await this.lab.start());
    return this.client;
  }

  /**
   * The file's fulfilment settings; their seed, unless the file set one of its own, is the
   * run's: `--seed` draws other shipping paths (holds, failed attempts, durations) too.
   */
  private fulfilmentConfig(): FulfilmentConfig {
    const { fulfilment } = this.scenario;
    return fulfilment.seed === DEFAULT_FULFILMENT_CONFIG.seed
      ? { ...fulfilment, seed: `scenario/${this.seed}/fulfilment` }
      : fulfilment;
  }

  /** An order (a device request or a replacement) reached a fulfilment status. */
  private reached(order: string, status: string): void {
    const statuses = this.orders.get(order) ?? new Set<string>();
    statuses.add(status);
    this.orders.set(order, statuses);
  }

  /** Drives the clock to `until`, a step at a time, letting each step's I/O finish. */
  private async pump(until: number): Promise<void> {
    const fleet = this.fleet!;
    while (this.clock.now() < until && this.options.signal?.aborted !== true) {
      await this.clock.run({
        until: Math.min(until, this.clock.now() + this.step),
        held: () => this.held.doneWith(this.parts.timedWork),
        // Below 0.001× even the least step, a virtual ms, is more than a wall second.
        signal: this.options.signal,
      });
      await this.held.doneWith(this.parts.timedWork);
      if (this.held.failure !== undefined) throw this.held.failure;
      // Through a store failure: ingestion retries on this clock (StoreWatch.settle).
      await this.storeWatch!.settle(fleet.settle());
      await this.parts.dispatcher.idle();
      this.options.progress?.update(this.progressState());
    }
  }

  /** Against the scenario's own span: the drain after it shows as done, not as more days. */
  private progressState() {
    const fleet = this.fleet!;
    let readings = 0;
    for (const p of fleet.patients) for (const d of p.devices) readings += d.ledger.takenCount;
    return {
      virtualNow: this.clock.now(),
      startMs: this.scenario.clock.startMs,
      endMs: this.scenario.clock.startMs + this.scenario.durationMs,
      readings,
      webhooks: this.receiver!.received().length,
      faults: this.faults,
    };
  }

  private async report(client: LabClient, end: number, wallMs: number): Promise<ScenarioReport> {
    const { scenario } = this;
    const fleet = this.fleet!;
    const { readings, measurements, mismatches } = await countReadings(fleet, client);
    const webhookCounts = await countWebhooks(client, scenario.accounts, this.webhooks);
    const fulfilment = new Map<string, number>();
    for (const statuses of this.orders.values()) {
      for (const status of statuses) fulfilment.set(status, (fulfilment.get(status) ?? 0) + 1);
    }
    const observed: Observed = {
      readings,
      webhooks: webhookCounts,
      fulfilment,
      api: async (account, path) => {
        const answer = await client.hwi<unknown>(account, "GET", path);
        return { status: answer.status, count: resultCount(answer.body) };
      },
    };
    // An event the lab refused fails the run as a check of its own, listed first.
    const expectations = [
      ...this.refused.results,
      ...(await evaluate(scenario.expectations, observed)),
    ];
    const bodies = new Map<string, string>();
    for (const d of this.receiver!.received()) bodies.set(d.deliveryId ?? d.body, d.body);
    const webhooks: Record<string, number> = {};
    for (const w of webhookCounts) {
      const key = `${w.event} ${w.state}`;
      webhooks[key] = (webhooks[key] ?? 0) + w.count;
    }
    const virtualMs = end - scenario.clock.startMs;
    return {
      scenario: scenario.name,
      file: scenario.file,
      seed: this.seed,
      passed: expectations.every((e) => e.passed),
      digest: scenarioDigest(measurements, [...bodies.values()]),
      counts: { readings, webhooks },
      expectations,
      virtual: { start: toIsoMicros(scenario.clock.startMs), end: toIsoMicros(end) },
      wall_ms: Math.round(wallMs),
      speedup: rate(virtualMs / Math.max(1, wallMs)),
      readings_per_wall_second: rate(readings.taken / Math.max(0.001, wallMs / 1000)),
      faults: this.faults,
      mismatches,
      dead_letters: this.deadLetters!.counts(),
    };
  }
}
