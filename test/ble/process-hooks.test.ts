/**
 * withoutProcessHooks: the SIGINT and exit listeners a BLE host adds to the process go (noble and
 * bleno would process.exit(1) on Ctrl-C), those the lab adds stay — including one added in the
 * microtasks that follow a host's start, before the host's own deferred start has run.
 */
import { afterEach, describe, expect, it } from "vitest";
import { withoutProcessHooks } from "../../src/ble/hosts/load.ts";

const added: Array<["SIGINT" | "exit", () => void]> = [];
function listen(event: "SIGINT" | "exit", listener: () => void): void {
  process.on(event, listener);
  added.push([event, listener]);
}
const nextTick = () => new Promise<void>((resolve) => process.nextTick(resolve));

afterEach(() => {
  for (const [event, listener] of added.splice(0)) process.off(event, listener);
});

describe("withoutProcessHooks", () => {
  it("removes the host's hooks, added at once or in its next tick, and keeps the lab's", async () => {
    const hostNow = () => undefined;
    const hostTick = () => undefined;
    const hostExit = () => undefined;
    const lab = () => undefined;
    // As in an async start: the host is loaded in a microtask, and so is what follows it.
    await Promise.resolve();
    withoutProcessHooks(() => {
      listen("SIGINT", hostNow);
      // noble's lazy init: its bindings start, and add their hooks, in a process.nextTick.
      process.nextTick(() => {
        listen("SIGINT", hostTick);
        listen("exit", hostExit);
      });
    });
    await Promise.resolve();
    listen("SIGINT", lab); // rpmlab device's untilSignal, right after DeviceApp.start
    await nextTick();
    await nextTick();
    const sigint = process.listeners("SIGINT");
    expect(sigint).toContain(lab);
    expect(sigint).not.toContain(hostNow);
    expect(sigint).not.toContain(hostTick);
    expect(process.listeners("exit")).not.toContain(hostExit);
  });
});
