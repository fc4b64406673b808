import { Agent, fetch, type Response } from "undici";

/** One Server-Sent Event as the lab's feed sends it: its name and its JSON data. */
export interface SseEvent {
  readonly type: string;
  readonly data: Record<string, unknown>;
}

interface Waiter {
  readonly match: (event: SseEvent) => boolean;
  readonly resolve: (event: SseEvent) => void;
}

/**
 * A client of GET /lab/v1/events/ as the dashboard page reads it (fetch, with the admin token):
 * every event kept in order; `next` waits, with a deadline, for one that matches.
 */
export class SseClient {
  readonly events: SseEvent[] = [];
  /** Resolves when the server ends the stream. */
  readonly ended: Promise<void>;
  private readonly waiters = new Set<Waiter>();

  private constructor(
    readonly response: Response,
    private readonly abort: AbortController,
    private readonly agent: Agent,
    holdUntil: Promise<void>,
  ) {
    this.ended = holdUntil.then(() => this.read());
  }

  /**
   * Connects; with `holdUntil`, reads nothing until it resolves (a stalled tab: the server's
   * writes back up once the socket buffers are full).
   */
  static async open(
    url: string,
    token: string,
    opts: { readonly holdUntil?: Promise<void> } = {},
  ): Promise<SseClient> {
    const abort = new AbortController();
    // Its own connections, destroyed on close: a shared pool keeps sockets open to the lab
    // (undici may open one as a stream is aborted), and a server waits for those as it closes.
    const agent = new Agent();
    const response = await fetch(url, {
      headers: { authorization: `Bearer ${token}` },
      signal: abort.signal,
      dispatcher: agent,
    });
    return new SseClient(response, abort, agent, opts.holdUntil ?? Promise.resolve());
  }

  /** The first event (already received or still to come) of `type` that `match` accepts. */
  next(
    type: string,
    match: (data: Record<string, unknown>) => boolean = () => true,
    deadlineMs = 15_000,
  ): Promise<Record<string, unknown>> {
    const accepts = (event: SseEvent) => event.type === type && match(event.data);
    const seen = this.events.find(accepts);
    if (seen !== undefined) return Promise.resolve(seen.data);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`no "${type}" event within ${deadlineMs} ms; got ${this.summary()}`));
      }, deadlineMs);
      const waiter: Waiter = {
        match: accepts,
        resolve: (event) => {
          clearTimeout(timer);
          resolve(event.data);
        },
      };
      this.waiters.add(waiter);
    });
  }

  /** Leaves the stream (as a closed browser tab does). */
  async close(): Promise<void> {
    this.abort.abort();
    await this.ended;
    await this.agent.destroy();
  }

  private summary(): string {
    return this.events.map((e) => e.type).join(", ") || "nothing";
  }

  private async read(): Promise<void> {
    const decoder = new TextDecoder();
    let buffered = "";
    try {
      for await (const chunk of this.response.body!) {
        buffered += decoder.decode(chunk as Uint8Array, { stream: true });
        for (let end = buffered.indexOf("\n\n"); end >= 0; end = buffered.indexOf("\n\n")) {
          this.take(buffered.slice(0, end));
          buffered = buffered.slice(end + 2);
        }
      }
    } catch (error) {
      if ((error as Error).name !== "AbortError") throw error;
    }
  }

  private take(frame: string): void {
    let type = "message";
    let data = "";
    for (const line of frame.split("\n")) {
      if (line.startsWith("event: ")) type = line.slice(7);
      else if (line.startsWith("data: ")) data += line.slice(6);
    }
    const event = { type, data: JSON.parse(data) as Record<string, unknown> };
    this.events.push(event);
    for (const waiter of this.waiters) {
      if (waiter.match(event)) {
        this.waiters.delete(waiter);
        waiter.resolve(event);
      }
    }
  }
}
