/**
 * Tells the sender of one message what became of it, once: `true` after the batch holding it
 * committed (the sender may forget it), `false` when ingestion stopped before that (the sender
 * keeps it and sends it again: nothing was acknowledged).
 */
export type Settle = (committed: boolean) => void;

/** A message as a source receives it. */
export interface Received {
  readonly topic: string;
  readonly payload: Uint8Array;
}

/** Where the ingestion core puts what a source receives. */
export interface IngestSink {
  /**
   * One message. `proceed` is called when the core wants the next one: at once, or once the
   * queue behind the store has drained below its high-water mark (backpressure); never while
   * the core stops.
   */
  deliver(message: Received, settle: Settle, proceed: () => void): void;
}

/**
 * Where uplink and status messages come from (src/ingest/sources): a subscription on any
 * broker (an MQTT client on a persistent session), or the embedded broker's publish tap.
 */
export interface IngestSource {
  /** Describes the source in logs, e.g. "subscription rpmlab-ingest on mqtt://…". */
  readonly describe: string;
  start(sink: IngestSink): Promise<void>;
  /** Stops receiving. Messages delivered and not yet settled are settled `false` by the core. */
  stop(): Promise<void>;
}
