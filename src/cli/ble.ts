import type { Command } from "commander";
import { ControllerApp } from "../app/ble-controller.ts";
import { DeviceApp } from "../app/ble-device.ts";
import { GatewayApp } from "../app/ble-gateway.ts";
import { GatewayRun } from "../app/gateway-run.ts";
import { untilSignal } from "../app/until-signal.ts";
import { parseBdAddr } from "../ble/hci/address.ts";
import { Catalogue } from "../catalogue/catalogue.ts";
import { DEFAULT_BLE, formatTcpSpec, parseBleSpec, parseListenSpec } from "../config/ble-spec.ts";
import { parseBrokerSpec } from "../config/broker-spec.ts";
import { parseDuration } from "../config/duration.ts";
import { MQTT_PASSWORD_ENV } from "../config/mqtt-password.ts";
import { quotedValue } from "../core/clip.ts";
import { RpmlabError } from "../core/errors.ts";
import { inCheckinRange } from "../gateway/checkin-period.ts";
import type { WhitelistEntry } from "../gateway/whitelist.ts";
import {
  addCellularOptions,
  type CellularFlags,
  isCellularRun,
  runCellularDeviceCommand,
} from "./cellular-device.ts";
import { gatewayIdentity } from "./gateway-identity.ts";
import type { CliIo } from "./io.ts";
import { seedText } from "./seed.ts";

const BLE_HELP = "emulated, tcp://host:port (rpmlab controller) or hci:N (real adapter)";
const collect = (value: string, previous: string[]): string[] => [...previous, value];

/** A whole-number flag: digits only, and no more than a number holds exactly (2^53 − 1). */
function whole(option: string, text: string): number {
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new RpmlabError(
      "E_CONFIG_INVALID",
      `${option} must be a whole number up to ${Number.MAX_SAFE_INTEGER}, got ${quotedValue(text)}`,
      { field: option },
    );
  }
  return Number(text);
}

/**
 * Starts an app and stops it on SIGINT or SIGTERM, handled from before the start: the app prints
 * that it is ready while starting, and a Ctrl-C right after that line, before a handler was
 * installed, killed the process instead of stopping it. A signal during the start aborts the
 * signal `start` is given (a gateway waiting for a broker's CONNACK gives up at once) and ends
 * the command as a stop, not a failure. A failed start removes the handlers.
 */
async function runUntilSignal<T>(
  start: (signal: AbortSignal) => Promise<T>,
  stop: (app: T) => unknown,
  lost?: (app: T) => Promise<Error>,
): Promise<void> {
  const failed = new AbortController();
  const interrupted = new AbortController();
  const signalled = untilSignal(failed.signal).then(() => interrupted.abort());
  let app: T;
  try {
    app = await start(interrupted.signal);
  } catch (error) {
    failed.abort();
    if (interrupted.signal.aborted) return;
    throw error;
  }
  // A controller that goes away (tcp://) ends the command with its error: the host stacks
  // cannot tell, and the device or gateway went on in silence.
  const failure = await Promise.race([signalled.then(() => undefined), lost?.(app) ?? signalled]);
  if (failure !== undefined) failed.abort();
  await stop(app);
  if (failure !== undefined) throw failure;
}

/** `rpmlab controller`, `rpmlab device`, `rpmlab gateway`: the BLE parts on their own. */
export function registerBleCommands(program: Command, io: CliIo): void {
  const json = (o: unknown): void =>
    io.out(
      JSON.stringify(o, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString("hex") : v)),
    );

  program
    .command("controller")
    .description(
      "Host a radio medium of virtual controllers that HCI hosts attach to over TCP (H4), until SIGINT",
    )
    .requiredOption("--listen <tcp://host:port>", "where to listen; port 0 picks a free one")
    .option(
      "--btsnoop <file>",
      "write every controller's HCI traffic (BlueZ monitor btsnoop, for Wireshark/btmon)",
    )
    .option("--seed <seed>", "seed of the medium's packet loss", "1")
    .action(async (flags: { listen: string; btsnoop?: string; seed: string }) => {
      const { host, port } = parseListenSpec(flags.listen);
      const seed = seedText(flags.seed);
      await runUntilSignal(
        async () => {
          const app = await ControllerApp.start({
            host,
            port,
            seed,
            btsnoop: flags.btsnoop,
          });
          io.out(`rpmlab controller listening on ${formatTcpSpec(host, app.port)}`);
          return app;
        },
        (app) => app.stop(),
      );
    });

  const device = program
    .command("device <profile>")
    .description(
      "Run one virtual device: a BLE peripheral advertising from an HCI adapter (--ble) until SIGINT, or a direct-cellular device publishing its readings to an MQTT broker (--broker)",
    )
    .option("--ble <spec>", BLE_HELP, DEFAULT_BLE)
    .option("--serial <serial>", "serial number (Device Information)", "SN000001")
    .option(
      "--address <address>",
      "advertise from this public address, the one a gateway's whitelist names (emulated or tcp://)",
    )
    .option(
      "--every <seconds>",
      "take a reading every N seconds (BLE, 0: never; cellular, 0: on the patient's schedule)",
      "0",
    )
    .option("--btsnoop <file>", "capture this host's HCI traffic (not for hci:N: use btmon there)")
    .option("--seed <seed>", "seed of its readings", "1");
  addCellularOptions(device).action(
    async (
      profile: string,
      flags: {
        ble: string;
        serial: string;
        every: string;
        address?: string;
        btsnoop?: string;
        seed: string;
      } & CellularFlags,
      command: Command,
    ) => {
      if (isCellularRun(profile, command)) {
        await runCellularDeviceCommand(profile, flags, io);
        return;
      }
      const ble = parseBleSpec(flags.ble);
      const everyMs = whole("--every", flags.every) * 1000;
      const seed = seedText(flags.seed);
      await runUntilSignal(
        () =>
          DeviceApp.start({
            profile,
            ble,
            serial: flags.serial,
            seed,
            everyMs,
            address:
              flags.address === undefined ? undefined : parseBdAddr(flags.address, "--address"),
            btsnoop: flags.btsnoop,
            onEvent: json,
          }),
        (app) => app.stop(),
        (app) => app.lost,
      );
    },
  );

  program
    .command("gateway")
    .description(
      "Without --broker: scan with an HCI adapter (noble) and visit whitelisted devices, printing raw values. With --broker: run one simulated cellular gateway (MQTT, whitelist from the service, store-and-forward) against rpmlab serve or any broker. Until SIGINT",
    )
    .option("--ble <spec>", `${BLE_HELP}; with --broker also direct`, DEFAULT_BLE)
    .option(
      "--broker <url>",
      "mqtt://host:port of the lab (rpmlab serve prints it): run the gateway runtime",
    )
    .option("--gateway-uuid <uuid>", "12 hex characters (default: drawn from --seed)")
    .option(
      "--username <user>",
      `MQTT username (the gateway uuid); with --password or $${MQTT_PASSWORD_ENV}`,
    )
    .option(
      "--password <password>",
      `MQTT password issued by the lab (or $${MQTT_PASSWORD_ENV}: a command line is readable by every local user)`,
    )
    .option(
      "--url <url>",
      "rpmlab serve's base URL, to issue credentials (default $RPMLAB_URL, else http://127.0.0.1:8000)",
    )
    .option("--admin-token <token>", "lab admin token, to issue credentials ($RPMLAB_ADMIN_TOKEN)")
    .option("--outbox <dir>", "keep the outbox and state on disk here (survives a restart)")
    .option(
      "--every <seconds>",
      "--ble direct: each whitelisted device takes a reading this often",
      "60",
    )
    .option(
      "--checkin-every <duration>",
      "with --broker: how often the gateway checks in, 1m to 1h (default 15m)",
    )
    .option("--seed <seed>", "seed of the gateway's identity, link and simulated readings", "1")
    .option(
      "--sensor-code <code>",
      "whitelist a sensor code (repeatable; without --broker)",
      collect,
      [],
    )
    .option(
      "--address <address>",
      "whitelist a device address (repeatable; without --broker)",
      collect,
      [],
    )
    .option("--linger <ms>", "stay connected for live readings after the stored ones", "5000")
    .option("--revisit <ms>", "visit a device again no sooner than this", "60000")
    .option("--btsnoop <file>", "capture this host's HCI traffic (not for hci:N: use btmon there)")
    .action(
      async (
        flags: {
          ble: string;
          broker?: string;
          gatewayUuid?: string;
          username?: string;
          password?: string;
          url?: string;
          adminToken?: string;
          outbox?: string;
          every: string;
          checkinEvery?: string;
          seed: string;
          sensorCode: string[];
          address: string[];
          linger: string;
          revisit: string;
          btsnoop?: string;
        },
        command: Command,
      ) => {
        const everySeconds = directEvery(flags, command.getOptionValueSource("every") === "cli");
        const seed = seedText(flags.seed);
        if (flags.broker !== undefined) {
          const broker = parseBrokerSpec(flags.broker, "--broker");
          if (broker.kind === "embedded") {
            throw new RpmlabError(
              "E_USAGE",
              "--broker takes the URL of a running broker (mqtt://host:port, as rpmlab serve prints it), not embedded",
              { field: "broker" },
            );
          }
          const { gatewayUuid, credentials } = gatewayIdentity(flags);
          const checkinEveryMs = checkinPeriod(flags.checkinEvery);
          await runUntilSignal(
            (signal) =>
              GatewayRun.start({
                broker: broker.url,
                ble: flags.ble.trim() === "direct" ? { kind: "direct" } : parseBleSpec(flags.ble),
                gatewayUuid,
                credentials,
                outboxDir: flags.outbox,
                seed,
                everyMs: everySeconds * 1000,
                lingerMs: whole("--linger", flags.linger),
                revisitMs: whole("--revisit", flags.revisit),
                checkinEveryMs,
                btsnoop: flags.btsnoop,
                onEvent: json,
                signal,
              }),
            (app) => app.stop(),
            (app) => app.lost,
          );
          return;
        }
        if (flags.checkinEvery !== undefined) {
          throw new RpmlabError(
            "E_USAGE",
            "--checkin-every needs --broker: without it the gateway only scans and reads devices",
            { field: "checkinEvery" },
          );
        }
        const whitelist: WhitelistEntry[] = [
          ...knownSensorCodes(flags.sensorCode).map((sensorCode) => ({ sensorCode })),
          ...flags.address.map((address) => ({ address: parseBdAddr(address, "--address") })),
        ];
        if (whitelist.length === 0)
          throw new RpmlabError(
            "E_USAGE",
            "give --sensor-code or --address (or --broker, to take the whitelist from the service): the gateway connects only to whitelisted devices",
          );
        if (flags.ble.trim() === "direct") {
          throw new RpmlabError(
            "E_USAGE",
            "--ble direct needs --broker: its devices follow the service's whitelist",
            { field: "ble" },
          );
        }
        await runUntilSignal(
          () =>
            GatewayApp.start({
              ble: parseBleSpec(flags.ble),
              whitelist,
              lingerMs: whole("--linger", flags.linger),
              revisitMs: whole("--revisit", flags.revisit),
              seed,
              btsnoop: flags.btsnoop,
              onValue: (value) => json({ event: "value", ...value }),
              onEvent: json,
            }),
          (app) => app.stop(),
          (app) => app.lost,
        );
      },
    );
}

/**
 * `gateway --every`: how often --ble direct's virtual devices take a reading (with --broker), at
 * least a second (0 took none, silently); with any other gateway, which reads what the devices
 * hold, a usage error.
 */
function directEvery(
  flags: { broker?: string; ble: string; every: string },
  given: boolean,
): number {
  const direct = flags.broker !== undefined && flags.ble.trim() === "direct";
  if (given && !direct) {
    throw new RpmlabError(
      "E_USAGE",
      "--every sets how often --ble direct's virtual devices take a reading (with --broker); a scanning gateway reads what the devices hold",
      { field: "every" },
    );
  }
  const seconds = whole("--every", flags.every);
  if (seconds < 1) {
    throw new RpmlabError(
      "E_CONFIG_INVALID",
      `--every must be at least 1 second, got "${flags.every}"`,
      {
        field: "every",
      },
    );
  }
  return seconds;
}

/** `--checkin-every`: a duration from 1m to 1h (README "Cellular gateway"). */
function checkinPeriod(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const ms = parseDuration(text);
  if (ms === undefined || !inCheckinRange(ms)) {
    throw new RpmlabError(
      "E_USAGE",
      `--checkin-every takes a duration from 1m to 1h (the service reports a gateway silent for over an hour with signal 0), got "${text}"`,
      { field: "checkinEvery" },
    );
  }
  return ms;
}

/** Whitelisted sensor codes must be ones a catalogue device type has (spec 2.3). */
function knownSensorCodes(codes: readonly string[]): readonly string[] {
  if (codes.length === 0) return codes;
  const catalogue = Catalogue.load();
  for (const code of codes) {
    if (catalogue.withSensorCode(code).length > 0) continue;
    const known = [...new Set(catalogue.profiles.flatMap((p) => p.sensor_code ?? []))].sort();
    throw new RpmlabError(
      "E_CONFIG_INVALID",
      `--sensor-code ${code}: no device type has it; the catalogue's codes are ${known.join(", ")}`,
      { field: "sensor-code", value: code },
    );
  }
  return codes;
}
