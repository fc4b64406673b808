import { BtsnoopWriter, fileSink } from "../ble/btsnoop.ts";
import { ControllerServer } from "../ble/controller-server.ts";
import { EmulatedRadio } from "../ble/radio.ts";
import { SystemClock } from "../core/clock.ts";
import { Rng } from "../core/rng.ts";

export interface ControllerAppOptions {
  host: string;
  port: number;
  seed: string;
  btsnoop?: string | undefined;
}

/** `rpmlab controller --listen tcp://…`: a radio medium hosts in other processes attach to. */
export class ControllerApp {
  private constructor(
    private readonly clock: SystemClock,
    private readonly radio: EmulatedRadio,
    private readonly server: ControllerServer,
  ) {}

  static async start(options: ControllerAppOptions): Promise<ControllerApp> {
    const clock = new SystemClock();
    const radio = new EmulatedRadio(clock, new Rng(options.seed));
    if (options.btsnoop !== undefined)
      radio.captureTo(new BtsnoopWriter(fileSink(options.btsnoop), () => clock.now()));
    let server: ControllerServer;
    try {
      server = await ControllerServer.listen(radio, options.host, options.port);
    } catch (error) {
      // Port taken: the capture file is closed, not left to the process's exit.
      try {
        radio.close();
      } finally {
        clock.dispose();
      }
      throw error;
    }
    return new ControllerApp(clock, radio, server);
  }

  get port(): number {
    return this.server.port;
  }

  async stop(): Promise<void> {
    await this.server.close();
    try {
      this.radio.close();
    } finally {
      this.clock.dispose();
    }
  }
}
