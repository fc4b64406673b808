/**
 * LE legacy pairing (Just Works) between unmodified noble and bleno, and LE encryption on the
 * virtual controllers: noble reads a characteristic bleno guards, gets Insufficient
 * Authentication, pairs over SMP; bleno hands its STK to "the kernel" through the management
 * socket; the central starts encryption with the same key, and the read succeeds.
 */
import { afterEach, describe, expect, it } from "vitest";
import { EVT, H4, OP } from "../../src/ble/hci/constants.ts";
import { HostWorker } from "../../src/ble/hosts/worker-host.ts";
import { EmulatedRadio } from "../../src/ble/radio.ts";
import { SystemClock } from "../../src/core/clock.ts";
import { Rng } from "../../src/core/rng.ts";
import { within } from "./support/lab.ts";

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

describe("legacy pairing and encryption", () => {
  it("noble pairs with bleno, both links encrypt, and the guarded read returns its value", async () => {
    const clock = new SystemClock();
    const radio = new EmulatedRadio(clock, new Rng("pairing"));
    closers.push(
      () => clock.dispose(),
      () => radio.close(),
    );
    const pc = radio.controller("peripheral");
    const cc = radio.controller("central");
    const seen: Array<[string, Buffer]> = [];
    pc.tap((d, p) => seen.push([`p:${d}`, p]));
    cc.tap((d, p) => seen.push([`c:${d}`, p]));

    const peripheral = HostWorker.start(
      pc,
      new URL("./fixtures/secure-peripheral.ts", import.meta.url),
      {},
    );
    closers.push(() => peripheral.close());
    await within(20_000, "peripheral ready", (done) => peripheral.worker.once("message", done));
    const central = HostWorker.start(
      cc,
      new URL("./fixtures/secure-central.ts", import.meta.url),
      {},
    );
    closers.push(() => central.close());
    const result = await within<{ type: string; value?: string; message?: string }>(
      20_000,
      "the read",
      (done) => central.worker.once("message", done),
    );

    expect(result).toEqual({ type: "read", value: "secret" });
    const isCommand = (p: Buffer, op: number) => p[0] === H4.COMMAND && p.readUInt16LE(1) === op;
    const encryptionChanges = (side: string) =>
      seen
        .filter(([s, p]) => s === side && p[0] === H4.EVENT && p[1] === EVT.ENCRYPTION_CHANGE)
        .map(([, p]) => [p[3], p[6]]);
    expect(
      seen.some(([s, p]) => s === "c:host-to-controller" && isCommand(p, OP.LE_ENABLE_ENCRYPTION)),
    ).toBe(true);
    // The emulated kernel answered the LTK request with the key bleno loaded through mgmt.
    expect(
      seen.some(([s, p]) => s === "p:host-to-controller" && isCommand(p, OP.LE_LTK_REQUEST_REPLY)),
    ).toBe(true);
    expect(encryptionChanges("c:controller-to-host")).toEqual([[0, 1]]);
    expect(encryptionChanges("p:controller-to-host")).toEqual([[0, 1]]);
  });
});
