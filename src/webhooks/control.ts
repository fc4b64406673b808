import type { Clock } from "../core/clock.ts";
import type { Rng } from "../core/rng.ts";
import type { Store } from "../store/store.ts";
import { ManualSends } from "./manual.ts";
import { createWebhookSender, type WebhookSender } from "./sender.ts";

/** What the API asks of webhook delivery beyond the store. */
export interface WebhookControl {
  /** A write committed outbox entries: the dispatcher looks at once (its poll would, later). */
  nudge(): void;
  /** Resends and test sends. */
  readonly manual: ManualSends;
}

/**
 * Without a dispatcher (an API built alone, a CLI command): nudges go nowhere, and resends and
 * test sends post through a sender of their own; `close` closes it.
 */
export function standaloneWebhookControl(deps: {
  readonly store: Store;
  readonly clock: Clock;
  readonly rng: Rng;
  readonly sender?: WebhookSender;
}): WebhookControl & { close(): Promise<void> } {
  const sender = deps.sender ?? createWebhookSender("http");
  return {
    nudge: () => undefined,
    manual: new ManualSends({ ...deps, sender }),
    close: () => sender.close(),
  };
}
