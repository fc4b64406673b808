import type { Command } from "commander";
import { ControllerApp } from "../app/ble-controller.ts";
import { DeviceApp } from "../app/ble-device.ts";
import { GatewayApp } from "../app/ble-gateway.ts";
import { untilSignal } from "../app/until-signal.ts";
import { DEFAULT_BLE, parseBleSpec, parseListenSpec } from "../config/ble-spec.ts";
import { RpmlabError } from "../core/errors.ts";
import type { WhitelistEntry } from "../gateway/whitelist.ts";
import {
  addCellularOptions,
  type CellularFlags,
  isCellularRun,
  runCellularDeviceCommand,
} from "./cellular-device.ts";
import type { CliIo } from "./io.ts";

const BLE_HELP = `emulated, tcp://host:port (rpmlab controller) or hci:N (real adapter) (default ${DEFAULT_BLE})`;
const collect = (value: string, previous: string[]): string[] => [...previous, value];

function whole(option: string, text: string): number {
  if (!/^\d+$/.test(text))
    throw new RpmlabError("E_CONFIG_INVALID", `${option} must be a whole number, got "${text}"`, {
      field: option,
    });
  return Number(text);
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
      const app = await ControllerApp.start({
        host,
        port,
        seed: flags.seed,
        btsnoop: flags.btsnoop,
      });
      io.out(`rpmlab controller listening on tcp://${host}:${app.port}`);
      await untilSignal();
      await app.stop();
    });

  const device = program
    .command("device <profile>")
    .description(
      "Run one virtual device: a BLE peripheral advertising from an HCI adapter (--ble) until SIGINT, or a direct-cellular device publishing its readings to an MQTT broker (--broker)",
    )
    .option("--ble <spec>", BLE_HELP, DEFAULT_BLE)
    .option("--serial <serial>", "serial number (Device Information)", "SN000001")
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
        btsnoop?: string;
        seed: string;
      } & CellularFlags,
      command: Command,
    ) => {
      if (isCellularRun(profile, command)) {
        await runCellularDeviceCommand(profile, flags, io);
        return;
      }
      const app = await DeviceApp.start({
        profile,
        ble: parseBleSpec(flags.ble),
        serial: flags.serial,
        seed: flags.seed,
        everyMs: whole("--every", flags.every) * 1000,
        btsnoop: flags.btsnoop,
        onEvent: json,
      });
      await untilSignal();
      app.stop();
    },
  );

  program
    .command("gateway")
    .description(
      "Scan with an HCI adapter (noble) and visit whitelisted devices, printing raw values, until SIGINT",
    )
    .option("--ble <spec>", BLE_HELP, DEFAULT_BLE)
    .option("--sensor-code <code>", "whitelist a sensor code (repeatable)", collect, [])
    .option("--address <address>", "whitelist a device address (repeatable)", collect, [])
    .option("--linger <ms>", "stay connected for live readings after the stored ones", "5000")
    .option("--revisit <ms>", "visit a device again no sooner than this", "60000")
    .option("--btsnoop <file>", "capture this host's HCI traffic (not for hci:N: use btmon there)")
    .action(
      async (flags: {
        ble: string;
        sensorCode: string[];
        address: string[];
        linger: string;
        revisit: string;
        btsnoop?: string;
      }) => {
        const whitelist: WhitelistEntry[] = [
          ...flags.sensorCode.map((sensorCode) => ({ sensorCode })),
          ...flags.address.map((address) => ({ address: address.toLowerCase() })),
        ];
        if (whitelist.length === 0)
          throw new RpmlabError(
            "E_USAGE",
            "give --sensor-code or --address: the gateway connects only to whitelisted devices",
          );
        const app = await GatewayApp.start({
          ble: parseBleSpec(flags.ble),
          whitelist,
          lingerMs: whole("--linger", flags.linger),
          revisitMs: whole("--revisit", flags.revisit),
          seed: "1",
          btsnoop: flags.btsnoop,
          onValue: (value) => json({ event: "value", ...value }),
          onEvent: json,
        });
        await untilSignal();
        app.stop();
      },
    );
}
