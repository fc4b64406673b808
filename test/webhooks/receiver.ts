/**
 * A real HTTP receiver on 127.0.0.1, port 0, standing in for a client's webhook endpoint: it
 * keeps every request (headers, raw body, parsed JSON) and answers as `behaviour` says — a
 * status, or no answer at all (`destroy`: the connection is dropped; `hold`: the answer waits
 * until `release()`). Waits are on events, with a deadline.
 */
import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { within } from "../mqtt/helpers.ts";

export interface Received {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly json: unknown;
}

export type Answer =
  | { readonly status: number; readonly body?: string; readonly headers?: Record<string, string> }
  | { readonly destroy: true }
  | { readonly hold: true };

export class Receiver {
  /** Requests answered or held. */
  readonly received: Received[] = [];
  /** Every request that arrived, dropped ones too. */
  readonly seen: Received[] = [];
  /** Requests answered at once with a 2xx: what a client would have processed. */
  readonly accepted: Received[] = [];
  /** Requests being answered right now; the most there ever were at once. */
  inFlight = 0;
  maxInFlight = 0;
  behaviour: (request: Received) => Answer = () => ({ status: 200, body: "ok" });
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly held: ServerResponse[] = [];
  private waiters: (() => void)[] = [];

  private constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        let json: unknown;
        try {
          json = JSON.parse(body);
        } catch {
          json = undefined;
        }
        const request = { path: req.url ?? "", headers: req.headers, body, json };
        this.seen.push(request);
        this.answer(request, req.socket, res);
        for (const wake of this.waiters.splice(0)) wake();
      });
    });
    this.server.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
  }

  private answer(request: Received, socket: Socket, res: ServerResponse): void {
    const answer = this.behaviour(request);
    if ("destroy" in answer) {
      socket.destroy();
      return;
    }
    this.received.push(request);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    res.on("close", () => {
      this.inFlight--;
    });
    if ("hold" in answer) {
      this.held.push(res);
      return;
    }
    if (answer.status >= 200 && answer.status < 300) this.accepted.push(request);
    res.writeHead(answer.status, { "content-type": "text/plain", ...answer.headers });
    res.end(answer.body ?? "");
  }

  static async start(): Promise<Receiver> {
    const receiver = new Receiver();
    await new Promise<void>((resolve) => receiver.server.listen(0, "127.0.0.1", resolve));
    return receiver;
  }

  url(path = "/hook"): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}${path}`;
  }

  /** Answers every held request with 200. */
  release(): void {
    for (const res of this.held.splice(0)) res.writeHead(200).end("released");
  }

  /** Waits until `n` requests were answered or held (not dropped). */
  count(n: number, ms?: number): Promise<void> {
    return this.until(() => this.received.length >= n, `${n} webhook requests`, ms);
  }

  /** Waits until `done()` holds, checked as each request arrives. */
  until(done: () => boolean, what: string, ms?: number): Promise<void> {
    const check = (resolve: () => void) => {
      if (done()) resolve();
      else this.waiters.push(() => check(resolve));
    };
    return within(new Promise<void>(check), what, ms);
  }

  async close(): Promise<void> {
    this.release();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
