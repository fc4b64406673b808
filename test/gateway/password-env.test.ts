/**
 * `rpmlab gateway --broker … --username U` with the MQTT password in $RPMLAB_MQTT_PASSWORD
 * instead of --password, which every local user can read (`ps`); README "Cellular gateway".
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { CliIo } from "../../src/cli/io.ts";
import { main } from "../../src/cli/main.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { ServeLab } from "./serve-lab.ts";

const GW = "C1C2C3D4E5F6";

/** `rpmlab gateway ARGS` in process; stopped (SIGTERM, as a user's Ctrl-C) once it has started. */
async function gateway(...args: string[]) {
  const out: Record<string, unknown>[] = [];
  let err = "";
  const io: CliIo = {
    out: (text) => {
      const event = JSON.parse(text) as Record<string, unknown>;
      out.push(event);
      if (event.event === "started") process.emit("SIGTERM");
    },
    err: (text) => {
      err += text;
    },
  };
  return { code: await main(["node", "rpmlab", "gateway", ...args], io), out, err };
}

describe("rpmlab gateway --broker: the MQTT password from $RPMLAB_MQTT_PASSWORD", () => {
  let serve: ServeLab | undefined;
  afterEach(async () => {
    vi.unstubAllEnvs();
    await serve?.stop();
    serve = undefined;
  }, 30_000);

  it("connects with it, and a wrong one is the broker's refusal; --password still wins", async () => {
    serve = await ServeLab.start(new VirtualClock({ startMs: Date.UTC(2026, 2, 2) }));
    const { password } = await serve.gatewayCredentials(GW);
    const args = ["--broker", serve.info.mqtt_url, "--username", GW, "--ble", "direct"];

    vi.stubEnv("RPMLAB_MQTT_PASSWORD", password);
    const run = await gateway(...args);
    expect(run.err).toBe("");
    expect(run.code).toBe(0);
    expect(run.out).toContainEqual(expect.objectContaining({ event: "started", gateway_uuid: GW }));

    vi.stubEnv("RPMLAB_MQTT_PASSWORD", "wrong");
    const refused = await gateway(...args);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/E_BROKER_REFUSED: .*bad user name or password/);
    const flag = await gateway(...args, "--password", password);
    expect(flag.code, flag.err).toBe(0);
  }, 30_000);

  it("without --username, or empty, it is a usage error naming what is missing", async () => {
    const broker = ["--broker", "mqtt://127.0.0.1:9", "--ble", "direct"];
    vi.stubEnv("RPMLAB_MQTT_PASSWORD", "s3cret");
    const alone = await gateway(...broker);
    expect(alone.code).toBe(2);
    expect(alone.err).toContain(
      "E_USAGE: $RPMLAB_MQTT_PASSWORD is set: give --username (the gateway uuid) with it",
    );
    // An empty variable counts as unset.
    vi.stubEnv("RPMLAB_MQTT_PASSWORD", "");
    const empty = await gateway(...broker, "--username", GW);
    expect(empty.code).toBe(2);
    expect(empty.err).toContain(
      "E_USAGE: give --username and --password (or $RPMLAB_MQTT_PASSWORD) together",
    );
  });

  it("--help names the variable", async () => {
    const help: string[] = [];
    const io: CliIo = { out: (t) => help.push(t), err: (t) => help.push(t) };
    expect(await main(["node", "rpmlab", "gateway", "--help"], io)).toBe(0);
    expect(help.join("")).toMatch(
      /--password <password>\s+MQTT password issued by the lab \(or\s+\$RPMLAB_MQTT_PASSWORD/,
    );
  });
});
