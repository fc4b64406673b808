import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type Clock, SystemClock, type TimerHandle } from "../core/clock.ts";
import { DELIVERY_HEADER, EVENT_HEADER } from "../webhooks/attempt.ts";

/**
 * The webhook endpoint a scenario hosts for its webhooks with `url: lab`: a real HTTP server on
 * 127.0.0.1, port 0, one path per webhook (`/hooks/<id>`), so deliveries cross a real socket as
 * they would to a client. Faults from the scenario's webhook.* actions are set per webhook:
 *
 * - down: the connection is destroyed without an answer, as a dead endpoint;
 * - slow: 200 after `delayMs` of wall time (real milliseconds, not the scenario's virtual clock:
 *   the dispatcher's HTTP timeout is about a real socket too); a sender that gives up first gets
 *   nothing, and its wait is cancelled;
 * - error: that status at once.
 *
 * Only requests answered with a 2xx are recorded: what a client would have processed.
 */
export type LabFault =
  | { readonly kind: "down" }
  | { readonly kind: "slow"; readonly delayMs: number }
  | { readonly kind: "error"; readonly status: number };

export interface LabDelivery {
  readonly webhookId: string;
  /** The X-Rpmlab-Event header. */
  readonly event: string | undefined;
  /** The X-Rpmlab-Delivery header: the same on every attempt of one delivery. */
  readonly deliveryId: string | undefined;
  readonly body: string;
}

const HOOK_PATH = /^\/hooks\/([^/?#]+)(?:[?#].*)?$/;

export interface LabReceiverOptions {
  /** Times slow answers; by default a SystemClock of the receiver's own (wall time). */
  readonly clock?: Clock;
}

export class LabReceiver {
  private readonly faults = new Map<string, LabFault>();
  private readonly deliveries: LabDelivery[] = [];
  // Timers of slow answers still waiting, so close() can cancel them.
  private readonly slowTimers = new Set<TimerHandle>();
  private readonly server: Server;

  private constructor(
    private readonly clock: Clock,
    private readonly ownClock: SystemClock | undefined,
  ) {
    this.server = createServer((req, res) => this.handle(req, res));
  }

  static async start(options: LabReceiverOptions = {}): Promise<LabReceiver> {
    let receiver: LabReceiver;
    if (options.clock !== undefined) receiver = new LabReceiver(options.clock, undefined);
    else {
      const own = new SystemClock();
      receiver = new LabReceiver(own, own);
    }
    await new Promise<void>((resolve, reject) => {
      receiver.server.once("error", reject);
      receiver.server.listen(0, "127.0.0.1", () => {
        receiver.server.off("error", reject);
        resolve();
      });
    });
    return receiver;
  }

  /** The URL to register for this scenario webhook. */
  url(webhookId: string): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}/hooks/${encodeURIComponent(webhookId)}`;
  }

  /** Sets or (with null) clears the fault of one webhook; requests already waiting keep theirs. */
  setFault(webhookId: string, fault: LabFault | null): void {
    if (fault === null) this.faults.delete(webhookId);
    else this.faults.set(webhookId, fault);
  }

  /**
   * Requests answered with a 2xx, in the order they were answered; of one webhook if named.
   * Without a webhook it is the receiver's own list, not a copy (it grows as deliveries arrive),
   * so `received().length` costs nothing in a progress update.
   */
  received(webhookId?: string): readonly LabDelivery[] {
    if (webhookId === undefined) return this.deliveries;
    return this.deliveries.filter((d) => d.webhookId === webhookId);
  }

  async close(): Promise<void> {
    for (const timer of this.slowTimers) this.clock.clearTimeout(timer);
    this.slowTimers.clear();
    this.ownClock?.dispose();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    // Keep-alive connections and requests still waiting on a slow answer would hold close().
    this.server.closeAllConnections();
    await closed;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const webhookId = hookId(req.url ?? "");
    if (webhookId === undefined) {
      req.resume();
      res.writeHead(404, { "content-type": "text/plain" }).end("no such hook");
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const delivery: LabDelivery = {
        webhookId,
        event: header(req, EVENT_HEADER),
        deliveryId: header(req, DELIVERY_HEADER),
        body: Buffer.concat(chunks).toString("utf8"),
      };
      this.answer(delivery, req, res, this.faults.get(webhookId));
    });
  }

  private answer(
    delivery: LabDelivery,
    req: IncomingMessage,
    res: ServerResponse,
    fault: LabFault | undefined,
  ): void {
    switch (fault?.kind) {
      case undefined:
        this.accept(delivery, res);
        return;
      case "down":
        req.socket.destroy();
        return;
      case "error":
        res.writeHead(fault.status, { "content-type": "text/plain" }).end("lab fault");
        if (fault.status >= 200 && fault.status < 300) this.deliveries.push(delivery);
        return;
      case "slow": {
        const timer = this.clock.setTimeout(() => {
          this.slowTimers.delete(timer);
          this.accept(delivery, res);
        }, fault.delayMs);
        this.slowTimers.add(timer);
        // A sender that gave up (its timeout) closed the connection: nothing is answered or
        // recorded, and the wait ends now rather than holding a timer for the whole delay.
        res.once("close", () => {
          if (this.slowTimers.delete(timer)) this.clock.clearTimeout(timer);
        });
        return;
      }
    }
  }

  private accept(delivery: LabDelivery, res: ServerResponse): void {
    this.deliveries.push(delivery);
    res.writeHead(200, { "content-type": "text/plain" }).end("ok");
  }
}

/** The webhook id of a `/hooks/<id>` path; undefined for any other path or a malformed escape. */
function hookId(url: string): string | undefined {
  const match = HOOK_PATH.exec(url);
  if (match === null) return undefined;
  try {
    return decodeURIComponent(match[1] as string);
  } catch {
    return undefined;
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}
