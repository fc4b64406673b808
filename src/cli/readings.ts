import type { Command } from "commander";
import { RpmlabError } from "../core/errors.ts";
import { MS_PER_DAY, PAST_YEAR_9999_MS, parseIso, toIsoMicros } from "../core/time.ts";
import { apiView } from "../readings/api-view.ts";
import { DEFAULT_DUPLICATE_RATE, DEFAULT_START, MAX_DAYS } from "../readings/generate.ts";
import { formatTable } from "../readings/table.ts";
import { decimal } from "./decimal.ts";
import type { CliIo } from "./io.ts";
import { seedOf } from "./seed.ts";

interface ReadingsFlags {
  patient: string;
  seed: string;
  days: string;
  start?: string;
  json?: boolean;
  includeDuplicates?: boolean;
  duplicateRate: string;
}

const DEFAULT_START_TEXT = toIsoMicros(DEFAULT_START).replace(".000000", "");

function invalid(option: string, message: string): RpmlabError {
  return new RpmlabError("E_CONFIG_INVALID", `${option} ${message}`, { field: option });
}

function wholeNumber(option: string, text: string, min: number, max: number): number {
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw invalid(option, `must be a whole number from ${min} to ${max}, got "${text}"`);
  }
  return value;
}

function parseFlags(flags: ReadingsFlags) {
  const seed = seedOf(flags.seed);
  const days = wholeNumber("--days", flags.days, 1, MAX_DAYS);
  const start = flags.start === undefined ? undefined : parseIso(flags.start);
  if (flags.start !== undefined && start === undefined) {
    throw invalid("--start", `must be an ISO 8601 date or date-time, got "${flags.start}"`);
  }
  // A day's margin for re-sent readings' receipt times: every time printed has a 4-digit year.
  if ((start ?? DEFAULT_START) + (days + 1) * MS_PER_DAY > PAST_YEAR_9999_MS) {
    throw invalid(
      "--start",
      `with --days ${days} runs past 9999-12-31, which no ISO 8601 four-digit year writes`,
    );
  }
  const duplicateRate = decimal(flags.duplicateRate);
  if (!(duplicateRate >= 0 && duplicateRate < 1)) {
    throw invalid(
      "--duplicate-rate",
      `must be a number from 0 to below 1, got "${flags.duplicateRate}"`,
    );
  }
  return { seed, days, start, duplicateRate };
}

/** `rpmlab readings <device>`: a patient model's readings of one device, as the API shows them. */
export function registerReadingsCommand(program: Command, io: CliIo): void {
  program
    .command("readings")
    .description(
      "Generate a device's readings for a patient model and print them as the API returns them",
    )
    .argument(
      "<device>",
      'device name as in the catalogue, e.g. "Vendor BPM - Wide Range" (legacy names accepted)',
    )
    .requiredOption(
      "--patient <model>",
      "patient model from profiles/patients, e.g. normal, hypertensive, heart-failure",
    )
    .option(
      "--seed <seed>",
      "seed of every random draw (a whole number, 0x2A too, or text; as a scenario file's seed:): the same seed prints the same readings",
      "1",
    )
    .option("--days <n>", `days to generate, 1 to ${MAX_DAYS}`, "7")
    .option(
      "--start <iso>",
      `first instant, ISO 8601 (default ${DEFAULT_START_TEXT}: fixed, not today, so output is reproducible)`,
    )
    .option("--json", "print a JSON array of the records as the API renders them")
    .option(
      "--include-duplicates",
      "also show readings the device re-sent (the API stores each record once and drops them)",
    )
    .option(
      "--duplicate-rate <p>",
      "share of readings the device re-sends",
      String(DEFAULT_DUPLICATE_RATE),
    )
    .action((device: string, flags: ReadingsFlags) => {
      const { seed, days, start, duplicateRate } = parseFlags(flags);
      const view = apiView({
        device,
        patient: flags.patient,
        seed,
        days,
        start,
        duplicateRate,
        includeDuplicates: flags.includeDuplicates === true,
      });
      io.out(flags.json ? JSON.stringify(view.records, null, 2) : formatTable(view.records));
      for (const note of view.notes) io.err(`rpmlab: note: ${note}`);
      if (view.droppedReadings > 0) {
        io.err(
          `rpmlab: dropped ${view.droppedReadings} re-sent reading(s) the API stores only once; --include-duplicates shows them`,
        );
      }
    });
}
