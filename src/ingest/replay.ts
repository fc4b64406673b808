import type { Clock } from "../core/clock.ts";
import type { MessageOutcome } from "./events.ts";
import type { ReplayOf } from "./prepare.ts";
import type { BatchProcessor } from "./processor.ts";
import type { Received } from "./source.ts";

/**
 * Runs a dead letter's message through ingestion again (README "Dead letters"): the running
 * lab's Ingestor.replay, or replayWith on a processor of its own where no ingestor runs (the
 * CLI on a store, an API built without a lab).
 */
export type Replay = (message: Received, replays: ReplayOf) => Promise<MessageOutcome>;

/** A replay committed by `processor` alone, received at the clock's time. */
export function replayWith(processor: BatchProcessor, clock: Clock): Replay {
  return async (message, replays) => {
    const result = await processor.process([
      { topic: message.topic, payload: message.payload, receivedAt: clock.now(), replays },
    ]);
    return result.outcomes[0]!;
  };
}
