import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { userInfo } from "node:os";
import { join } from "node:path";

/** Whether a `mosquitto` binary is on the PATH (Debian's package). */
export function mosquittoInstalled(): boolean {
  return spawnSync("mosquitto", ["-h"], { stdio: "ignore" }).error === undefined;
}

/** A port the kernel just handed out and released, for a broker that must restart on it. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address !== null
          ? resolve(address.port)
          : reject(new Error("no port")),
      );
    });
  });
}

/**
 * A Mosquitto of the drill's own on a port of its own, with persistence, so that it can be
 * restarted without touching the machine's shared broker: sessions and queued QoS 1 messages
 * survive a restart in `dir/mosquitto.db`, as on a production broker.
 */
export class OwnMosquitto {
  private process: ChildProcess | undefined;
  restarts = 0;

  private constructor(
    readonly port: number,
    private readonly config: string,
  ) {}

  static async start(dir: string): Promise<OwnMosquitto> {
    const port = await freePort();
    const config = join(dir, "mosquitto.conf");
    writeFileSync(
      config,
      [
        `listener ${port} 127.0.0.1`,
        "allow_anonymous true",
        "persistence true",
        `persistence_location ${dir}/`,
        // Started as root, Mosquitto switches to the user "mosquitto", who cannot write the
        // test's directory: its persistence file would silently never be saved.
        `user ${userInfo().username}`,
        "log_dest stderr",
        "log_type information",
        "",
      ].join("\n"),
    );
    const broker = new OwnMosquitto(port, config);
    await broker.run();
    return broker;
  }

  get url(): string {
    return `mqtt://127.0.0.1:${this.port}`;
  }

  /** Starts the broker and resolves once it says it listens. */
  private run(): Promise<void> {
    const child = spawn("mosquitto", ["-c", this.config], { stdio: ["ignore", "ignore", "pipe"] });
    this.process = child;
    return new Promise((resolve, reject) => {
      let log = "";
      const onData = (chunk: Buffer) => {
        log += chunk.toString();
        if (/listen socket on port/.test(log)) {
          child.stderr?.off("data", onData);
          child.stderr?.resume();
          resolve();
        }
      };
      child.stderr?.on("data", onData);
      child.once("exit", (code) => reject(new Error(`mosquitto exited (${code}): ${log}`)));
    });
  }

  /** SIGTERM (Mosquitto saves its persistence file), then the same broker again. */
  async restart(): Promise<void> {
    await this.stop();
    await this.run();
    this.restarts++;
  }

  async stop(): Promise<void> {
    const child = this.process;
    this.process = undefined;
    if (child === undefined || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
  }
}
