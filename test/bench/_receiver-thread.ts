import { Worker } from "node:worker_threads";

/**
 * The webhook benchmark's receiver (test/bench/webhooks.ts): a plain node:http server in its own
 * thread, so neither autocannon nor the dispatcher shares its event loop. It answers 200 to
 * every POST, counts them, and with `keys` notes when each record arrived.
 */
const RECEIVER = `
const http = require("node:http");
const { parentPort } = require("node:worker_threads");
let count = 0, target = Infinity, keys = false;
const arrivals = [];
const server = http.createServer({ keepAliveTimeout: 60000 }, (req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const at = performance.timeOrigin + performance.now();
    if (keys) {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      for (const r of Array.isArray(body) ? body : [body]) {
        arrivals.push([r.hwi_device_id + "|" + r.metric + "|" + r.timestamp, at]);
      }
    }
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("ok");
    if (++count >= target) { target = Infinity; parentPort.postMessage({ type: "reached", count }); }
  });
});
server.listen(0, "127.0.0.1", () => parentPort.postMessage({ type: "port", port: server.address().port }));
parentPort.on("message", (m) => {
  if (m.type === "reset") { count = 0; arrivals.length = 0; keys = m.keys; parentPort.postMessage({ type: "reset" }); }
  else if (m.type === "expect") { target = m.n; if (count >= target) { target = Infinity; parentPort.postMessage({ type: "reached", count }); } }
  else if (m.type === "arrivals") parentPort.postMessage({ type: "arrivals", arrivals });
  else if (m.type === "stop") server.close(() => process.exit(0));
});
`;

export class ReceiverThread {
  private readonly worker = new Worker(RECEIVER, { eval: true });
  port = 0;

  async start(): Promise<void> {
    this.port = ((await this.next("port")) as { port: number }).port;
  }

  url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async reset(keys: boolean): Promise<void> {
    this.worker.postMessage({ type: "reset", keys });
    await this.next("reset");
  }

  reached(n: number): Promise<unknown> {
    const done = this.next("reached");
    this.worker.postMessage({ type: "expect", n });
    return done;
  }

  async arrivals(): Promise<Map<string, number>> {
    const got = this.next("arrivals");
    this.worker.postMessage({ type: "arrivals" });
    return new Map(((await got) as { arrivals: [string, number][] }).arrivals);
  }

  async stop(): Promise<void> {
    const exited = new Promise((resolve) => this.worker.once("exit", resolve));
    this.worker.postMessage({ type: "stop" });
    await exited;
  }

  private next(type: string): Promise<unknown> {
    return new Promise((resolve) => {
      const on = (m: { type: string }) => {
        if (m.type !== type) return;
        this.worker.off("message", on);
        resolve(m);
      };
      this.worker.on("message", on);
    });
  }
}
