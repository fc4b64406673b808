/**
 * The gateway's state file read back (GatewayState.open): a damaged or hand-edited one is
 * refused with E_OUTBOX_UNAVAILABLE naming the file and the field at fault, never a bare
 * TypeError or an entry the gateway would report to the service without its address.
 */
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { openOutbox } from "../../src/cellular/outbox.ts";
import { isRpmlabError } from "../../src/core/errors.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { DirectRadio } from "../../src/devices/direct-device.ts";
import { Gateway, type QueuedReading } from "../../src/gateway/gateway.ts";
import { DirectBle } from "../../src/gateway/gateway-ble.ts";
import { GatewayState } from "../../src/gateway/gateway-state.ts";

const dir = mkdtempSync(join(tmpdir(), "rpmlab-gw-state-file-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function openWith(text: string): unknown {
  writeFileSync(join(dir, "G.state.json"), text);
  try {
    return GatewayState.open(dir, "G");
  } catch (error) {
    return error;
  }
}

describe("gateway state file", () => {
  it.each([
    ['{"held": 5}', "held"],
    ['{"held": [{"sensorCode": "10", "sensorId": null}]}', "held[0].mac"],
    ['{"held": [{"mac": "C00000000001", "sensorId": null}]}', "held[0].sensorCode"],
    ['{"held": [], "lastSequences": {"C00000000001": "7"}}', "lastSequences.C00000000001"],
    ["[]", "(root)"],
  ])("%s is refused naming %s", (text, field) => {
    const error = openWith(text);
    expect(isRpmlabError(error, "E_OUTBOX_UNAVAILABLE")).toBe(true);
    expect((error as { details: { field: string } }).details.field).toBe(field);
    expect((error as Error).message).toContain("G.state.json");
  });

  it("a state as saved reads back", () => {
    const state = openWith(
      JSON.stringify({
        held: [{ mac: "C00000000001", sensorCode: "10", sensorId: null }],
        lastSequences: { C00000000001: 7 },
      }),
    ) as GatewayState;
    expect(state.held).toEqual([{ mac: "C00000000001", sensorCode: "10", sensorId: null }]);
    expect(state.lastSequence("C00000000001")).toBe(7);
  });
});

describe("files beside the outbox", () => {
  it("the state and the disk outbox are readable by their owner only (the readings they hold)", async () => {
    const own = mkdtempSync(join(tmpdir(), "rpmlab-gw-private-"));
    try {
      GatewayState.open(own, "P").setLastSequence("C00000000001", 3);
      const outbox = await openOutbox<{ n: number }>({
        clock: new VirtualClock({ startMs: Date.UTC(2026, 0, 1) }),
        rng: new Rng("private"),
        capacity: 10,
        name: "P",
        dir: own,
      });
      outbox.enqueue({ n: 1 });
      try {
        // While open: SQLite removes the -wal file at its last connection's close.
        for (const file of ["P.state.json", "P.outbox.db", "P.outbox.db-wal"]) {
          expect((statSync(join(own, file)).mode & 0o777).toString(8), file).toBe("600");
        }
      } finally {
        outbox.close();
      }
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });

  it("the state file is the owner's only even when a crashed save left a readable temp file", () => {
    // A save killed between write and rename leaves P.state.json.tmp; writeFileSync's mode
    // applies only to a file it creates, so the next save kept that file's mode.
    const own = mkdtempSync(join(tmpdir(), "rpmlab-gw-tmp-"));
    try {
      writeFileSync(join(own, "P.state.json.tmp"), "{}", { mode: 0o644 });
      chmodSync(join(own, "P.state.json.tmp"), 0o644);
      GatewayState.open(own, "P").setLastSequence("C00000000001", 3);
      expect((statSync(join(own, "P.state.json")).mode & 0o777).toString(8)).toBe("600");
      expect(GatewayState.open(own, "P").lastSequence("C00000000001")).toBe(3);
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });

  it("a gateway reopened on its outbox holds what the earlier run left there, then its own", async () => {
    // `rpmlab gateway --outbox DIR` off the network, restarted: held() is the whole outbox.
    const own = mkdtempSync(join(tmpdir(), "rpmlab-gw-held-"));
    const open = () =>
      Gateway.open({
        clock: new VirtualClock({ startMs: Date.UTC(2026, 0, 1) }),
        rng: new Rng("held"),
        catalogue: Catalogue.load(),
        gatewayUuid: "C0C1C2C3C4C5",
        broker: { url: "mqtt://127.0.0.1:1" },
        ble: new DirectBle(new DirectRadio()),
        outbox: { dir: own },
      });
    const relayed = (sequence: number): QueuedReading => ({
      deviceAddress: "F01122334455",
      sensorCode: "10",
      receivedAt: Date.UTC(2026, 0, 1) + sequence,
      sequence,
      values: [{ uuid: "2A35", b64: "HgAAAAA=" }],
    });
    try {
      const first = await open();
      first.modem.send(relayed(1));
      first.modem.send(relayed(2));
      await first.stop();
      const again = await open();
      again.modem.send(relayed(3));
      expect(again.held()).toEqual([relayed(1), relayed(2), relayed(3)]);
      await again.stop();
      // Still read once stopped: what it goes back to the vendor with.
      expect(again.held().map((r) => r.sequence)).toEqual([1, 2, 3]);
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });
});
