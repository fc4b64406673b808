import { parentPort } from "node:worker_threads";
import { RelayedClock } from "./relayed-clock.ts";
import { tsWorkerData } from "./ts-worker.ts";
import { toWire } from "./wire-error.ts";
import type { FromCallThread, ToCallThread } from "./worker-calls.ts";

/** What a call-serving thread opened: how it answers a call, and how it closes. */
export interface CallHandler<Req, Res> {
  handle(request: Req): Promise<Res>;
  close(): Promise<void>;
}

/**
 * The thread side of WorkerCalls: `open` gets the thread's data and a clock that tells the main
 * thread's time as each call carries it; then calls run one after another, in the order they
 * came, until "stop" closes what was opened. A failure to open is reported and ends the thread.
 */
export async function serveWorkerCalls<Init extends { readonly now: number }, Req, Res>(
  open: (init: Init, clock: RelayedClock) => Promise<CallHandler<Req, Res>>,
): Promise<void> {
  const port = parentPort!;
  const init = tsWorkerData<Init>();
  const clock = new RelayedClock(init.now);
  const send = (message: FromCallThread<Res>) => port.postMessage(message);
  let handler: CallHandler<Req, Res>;
  try {
    handler = await open(init, clock);
  } catch (error) {
    send({ kind: "failed", error: toWire(error) });
    process.exit(1);
  }
  let queue = Promise.resolve();
  port.on("message", (message: ToCallThread<Req>) => {
    queue = queue.then(async () => {
      if (message.kind === "stop") {
        port.close();
        await handler.close();
        return;
      }
      clock.set(message.now);
      try {
        send({ kind: "done", id: message.id, result: await handler.handle(message.request) });
      } catch (error) {
        send({ kind: "error", id: message.id, error: toWire(error) });
      }
    });
  });
  send({ kind: "ready" });
}
