import type { Command } from "commander";
import { Catalogue, DEFAULT_PROFILES_DIR } from "../catalogue/catalogue.ts";
import { legacyNameNote, renderProfile, renderProfileList } from "../catalogue/render.ts";
import { summarizeProfile } from "../catalogue/summary.ts";
import { validateProfileDir } from "../catalogue/validate.ts";
import type { CliIo } from "./io.ts";

interface ListOptions {
  json?: boolean;
  dir?: string;
}

const DIR_HELP = "folder of device profiles (default: the shipped profiles/devices)";

/** `rpmlab profiles list|show|validate`: the device catalogue of spec 2.8. */
export function registerProfilesCommand(program: Command, io: CliIo): void {
  const profiles = program
    .command("profiles")
    .description("Device catalogue (spec 2.8): list, show and validate device profiles");

  profiles
    .command("list")
    .description("List every device type: sensor code, connectivity, offline storage, metrics")
    .option("--json", "print a JSON array (name, legacy_names, sensor_code, …, metrics)")
    .option("--dir <dir>", DIR_HELP)
    .action((options: ListOptions) => {
      const catalogue = Catalogue.load(options.dir);
      io.out(
        options.json
          ? JSON.stringify(catalogue.profiles.map(summarizeProfile), null, 2)
          : renderProfileList(catalogue.profiles),
      );
    });

  profiles
    .command("show")
    .description("Show one device profile; legacy names (spec 2.4) resolve to the current one")
    .argument("<name>", 'device name, e.g. "Vendor BPM - Wide Range" or "Vendor BPM - L"')
    .option("--json", "print the resolved profile as JSON (a legacy-name note goes to stderr)")
    .option("--dir <dir>", DIR_HELP)
    .action((name: string, options: ListOptions) => {
      const profile = Catalogue.load(options.dir).get(name);
      if (options.json) {
        const note = legacyNameNote(name, profile);
        if (note !== undefined) io.err(`rpmlab: ${note}`);
        io.out(JSON.stringify(profile, null, 2));
      } else {
        io.out(renderProfile(profile, name));
      }
    });

  profiles
    .command("validate")
    .description("Check every profile of a folder; print each problem as file: path: message")
    .argument("[dir]", DIR_HELP)
    .action((dir: string | undefined) => {
      io.out(validateProfileDir(dir ?? DEFAULT_PROFILES_DIR));
    });
}
