import type { Clock } from "../core/clock.ts";
import type { Rng } from "../core/rng.ts";
import type { BtsnoopWriter } from "./btsnoop.ts";
import { VirtualController } from "./controller/virtual-controller.ts";
import type { BdAddr } from "./hci/address.ts";
import type { Position } from "./medium/path-loss.ts";
import { RadioMedium, type RadioMediumOptions } from "./medium/radio-medium.ts";

/**
 * The emulated BLE world of one lab: a RadioMedium and the VirtualControllers on it, each with
 * a public address drawn from its own fork of the lab's Rng (locally administered range C0:…).
 */
export class EmulatedRadio {
  readonly medium: RadioMedium;
  private readonly controllers = new Set<VirtualController>();
  private capture: BtsnoopWriter | undefined;

  constructor(
    readonly clock: Clock,
    private readonly rng: Rng,
    propagation?: RadioMediumOptions["propagation"],
  ) {
    this.medium = new RadioMedium({
      clock,
      rng: rng.fork("medium"),
      ...(propagation === undefined ? {} : { propagation }),
    });
  }

  /** A new controller on the medium; `name` seeds its address, so it is stable across runs. */
  controller(name: string, position?: Position, address?: BdAddr): VirtualController {
    const rng = this.rng.fork(`controller:${name}`);
    const controller = new VirtualController({
      name,
      address: address ?? `c0:${rng.hex(10).toLowerCase().match(/../g)!.join(":")}`,
      medium: this.medium,
      rng,
    });
    if (position !== undefined) this.medium.move(controller, position);
    this.controllers.add(controller);
    this.capture?.add(controller);
    return controller;
  }

  /**
   * Powers a controller off and takes it off the medium for good (its host has gone). The capture
   * records its Delete Index now, at the time it went, not when the capture ends.
   */
  release(controller: VirtualController): void {
    this.capture?.remove(controller);
    controller.close();
    this.controllers.delete(controller);
  }

  /** Records every controller's HCI traffic, present and future (`--btsnoop FILE`). */
  captureTo(writer: BtsnoopWriter): void {
    this.capture = writer;
    for (const c of this.controllers) writer.add(c);
  }

  /** Ends the capture, then powers off every controller, even when the capture failed (it throws). */
  close(): void {
    const capture = this.capture;
    this.capture = undefined;
    try {
      capture?.close();
    } finally {
      for (const c of this.controllers) c.close();
      this.controllers.clear();
      this.medium.close();
    }
  }
}
