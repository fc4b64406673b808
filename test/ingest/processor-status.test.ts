/**
 * The MessageProcessor on a gateway's status topic: check-ins, the last will, the whitelist the
 * gateway holds. Uplinks of readings are in processor.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { toIsoMicros } from "../../src/core/time.ts";
import type { VirtualClock } from "../../src/core/virtual-clock.ts";
import type { MessageOutcome } from "../../src/ingest/events.ts";
import { MessageProcessor } from "../../src/ingest/processor.ts";
import { topicOf } from "../../src/mqtt/topics.ts";
import type { Store } from "../../src/store/store.ts";
import { activateForPatient, catalogue, inbound, memoryStore, senderFor } from "./fixtures.ts";

const bpm = senderFor(catalogue.get("Vendor BPM - Wide Range"), 1);

describe("MessageProcessor: gateway status", () => {
  let store: Store;
  let clock: VirtualClock;
  let processor: MessageProcessor;

  beforeEach(async () => {
    ({ store, clock } = await memoryStore());
    processor = new MessageProcessor({ store, catalogue });
  });
  afterEach(() => store.close());

  const run = async (...messages: { topic: string; payload: Uint8Array }[]) =>
    processor.process(messages.map((m) => inbound(m, clock.now())));
  const only = async (message: { topic: string; payload: Uint8Array }): Promise<MessageOutcome> =>
    (await run(message)).outcomes[0]!;

  it("applies gateway status and last will (spec 2.2, 2.3); ignores a cleared retained status", async () => {
    const topic = topicOf("gw/status", bpm.hardwareUuid);
    // The gateway's clock runs a day behind the service's.
    const receivedAt = clock.now();
    const checkinAt = receivedAt - 86_400_000;
    const online = {
      v: 1,
      online: true,
      signal_strength: 23,
      firmware_version: "2.4.1",
      bootloader_version: "1.0.3",
      provisioned: true,
      checkin_at: toIsoMicros(checkinAt),
    };
    const first = await only({ topic, payload: Buffer.from(JSON.stringify(online)) });
    expect(first.kind === "status" && first.gateway).toMatchObject({
      gatewayUuid: bpm.hardwareUuid,
      accountId: null,
      lastSignalStrength: 23,
      firmwareVersion: "2.4.1",
      bootloaderVersion: "1.0.3",
      provisioned: true,
      // Spec 2.2 "last connection to the service network": when the service received it.
      lastCheckinTime: receivedAt,
    });
    // The gateway's own time, for the service to answer with its time (downlink.ts).
    expect(first.kind === "status" && first.checkinAt).toBe(checkinAt);
    const will = await only({ topic, payload: Buffer.from('{"v":1,"online":false}') });
    expect(will.kind === "status" && will.gateway).toMatchObject({
      lastSignalStrength: 0,
      firmwareVersion: "2.4.1",
      lastCheckinTime: receivedAt,
    });
    expect(will.kind === "status" && will.checkinAt).toBeNull();
    expect(await only({ topic, payload: new Uint8Array(0) })).toEqual({
      kind: "ignored",
      reason: "retained status cleared",
    });
    const bad = await only({
      topic,
      payload: Buffer.from(JSON.stringify({ ...online, signal_strength: 40 })),
    });
    expect(bad.kind === "dead_letter" && bad.deadLetter.reason).toMatch(/signal_strength/);
  });
  it("confirms the whitelist entries a check-in reports holding, and sets back the others (spec 2.3)", async () => {
    const { device } = await activateForPatient(store, bpm);
    await store.gateways.associate(device.accountId, bpm.hardwareUuid);
    for (const mac of ["C00000000001", "C00000000002"]) {
      await store.whitelist.upsert(bpm.hardwareUuid, {
        macAddress: mac,
        sensorCode: "10",
        whitelistStatus: "RE",
      });
    }
    const topic = topicOf("gw/status", bpm.hardwareUuid);
    const checkIn = (held: string[], sensorCode = "10") => ({
      topic,
      payload: Buffer.from(
        JSON.stringify({
          v: 1,
          online: true,
          signal_strength: 20,
          firmware_version: "2.4.1",
          bootloader_version: "1.0.3",
          provisioned: true,
          checkin_at: "2026-03-01T08:00:00Z",
          whitelist: held.map((mac_address) => ({ mac_address, sensor_code: sensorCode })),
        }),
      ),
    });
    const statuses = async () =>
      Object.fromEntries(
        (await store.whitelist.list(bpm.hardwareUuid)).map((w) => [
          w.macAddress,
          w.whitelistStatus,
        ]),
      );
    const held = async (macs: string[], sensorCode?: string) => {
      const outcome = await only(checkIn(macs, sensorCode));
      return outcome.kind === "status" ? outcome.whitelistHeld : undefined;
    };
    // Holding part of it, or more than it: the check-in's answer must carry the whitelist.
    expect(await held(["C00000000001"])).toBe(false);
    expect(await statuses()).toEqual({ C00000000001: "CO", C00000000002: "RE" });
    expect(await held(["C00000000002"])).toBe(false);
    expect(await statuses()).toEqual({ C00000000001: "RE", C00000000002: "CO" });
    expect(await held(["C00000000001", "C00000000002", "C00000000003"])).toBe(false);
    // Exactly it, in any order: nothing to resend.
    expect(await held(["C00000000002", "C00000000001"])).toBe(true);
    // The addresses under another sensor code: wrong entries, which confirm nothing.
    expect(await held(["C00000000002", "C00000000001"], "99")).toBe(false);
    expect(await statuses()).toEqual({ C00000000001: "RE", C00000000002: "RE" });
    expect(await held(["C00000000002"])).toBe(false);
    // A check-in without the field (an older gateway) changes nothing.
    const plain = JSON.parse(checkIn([]).payload.toString());
    delete plain.whitelist;
    await run({ topic, payload: Buffer.from(JSON.stringify(plain)) });
    expect(await statuses()).toEqual({ C00000000001: "RE", C00000000002: "CO" });
  });
});
