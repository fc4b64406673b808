/**
 * A virtual cuff's SMP (bleno, behind the lab's checks) as a central pairing in raw SMP sees it
 * (Vol 3 Part H §3.5).
 */
import { afterEach, describe, expect, it } from "vitest";
import { type Closers, connectedCuff } from "./support/raw-att-central.ts";

const closers: Closers = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe("the virtual devices' pairing, to raw SMP", () => {
  it("fails pairing with Confirm Value Failed when the central's Pairing Random does not match its Confirm", async () => {
    const { smp } = await connectedCuff(closers);
    // Pairing Request: NoInputNoOutput, bonding, 16-octet keys (Just Works).
    const [response] = await smp("01030001100000");
    expect(response!.slice(0, 2)).toBe("02");
    const [confirm] = await smp(`03${"11".repeat(16)}`);
    expect(confirm!.slice(0, 2)).toBe("03");
    // A random that does not give the confirm sent: bleno answered reason 0x03 (Authentication
    // Requirements), where §2.3.5.5 has Confirm Value Failed (0x04, §3.5.5).
    expect(await smp(`04${"22".repeat(16)}`)).toEqual(["0504"]);
  });
});
