/**
 * README sections generated from the code that defines them, so the docs cannot drift: the device
 * catalogue, the ASR supply types, the patient models and the error codes. `npm run docs` rewrites them in place;
 * readme.test.ts fails when README.md is not current.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { SupplyCatalogue } from "../../src/asr/supply-catalogue.ts";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { FULFILMENT_DEFAULTS } from "../../src/config/fulfilment-config.ts";
import { ERROR_CODES } from "../../src/core/errors.ts";
import { TRANSITION_DOCS } from "../../src/fulfilment/transition-docs.ts";
import { TOPIC_KINDS, TOPIC_QOS, TOPICS } from "../../src/mqtt/topics.ts";
import { PatientModels } from "../../src/readings/patients.ts";
import {
  formatDuration,
  GIVE_UP_AFTER_MS,
  MAX_RETRY_MS,
  scheduleTable,
} from "../../src/webhooks/retry-policy.ts";

export const README_PATH = fileURLToPath(new URL("../../README.md", import.meta.url));

const cell = (text: string) => text.replaceAll("|", "\\|");

function table(header: string[], rows: string[][]): string {
  return [
    `| ${header.join(" | ")} |`,
    `|${header.map(() => "---").join("|")}|`,
    ...rows.map((row) => `| ${row.map(cell).join(" | ")} |`),
  ].join("\n");
}

export function catalogueSection(catalogue = Catalogue.load()): string {
  return table(
    [
      "device name",
      "sensor code",
      "connectivity",
      "stores offline",
      "metrics (value 1 / value 2)",
      "GATT",
    ],
    catalogue.profiles.map((p) => [
      p.name + (p.legacy_names.length > 0 ? ` (legacy: ${p.legacy_names.join(", ")})` : ""),
      p.sensor_code ?? "— (IMEI)",
      p.connectivity,
      p.stores_offline ? "yes" : "no",
      p.metrics
        .map((m) => {
          const v2 = m.value_2 === null ? "" : ` / ${m.value_2.units}`;
          return `${m.name}${m.vital ? "*" : ""} (${m.value_1.units}${v2})`;
        })
        .join(", "),
      `${p.gatt.mapping} (${p.gatt.service})`,
    ]),
  );
}

/** The ASR supply catalogue (profiles/supplies.yaml), in the order supply-types/ lists it. */
export function suppliesSection(supplies = SupplyCatalogue.load()): string {
  return table(
    ["supply name", "strips", "hardware_uuid_required", "deprecated", "compatible devices"],
    supplies.types.map((t) => [
      t.name,
      t.strips === null ? "—" : String(t.strips),
      t.hardwareUuidRequired ? "yes" : "no",
      t.deprecated ? "yes" : "no",
      t.compatibleDevices.join(", "),
    ]),
  );
}

export function patientsSection(models = PatientModels.load()): string {
  return table(
    ["model", "what it models"],
    models.models.map((m) => [`\`${m.name}\``, m.description]),
  );
}

export function errorsSection(): string {
  return table(
    ["code", "meaning"],
    Object.entries(ERROR_CODES).map(([code, meaning]) => [`\`${code}\``, meaning]),
  );
}

export function mqttTopicsSection(): string {
  const definition = (kind: (typeof TOPIC_KINDS)[number]) =>
    (TOPICS[kind].schema.meta() as { id?: string } | undefined)?.id ?? "";
  return table(
    ["topic", "sent by", "QoS", "retained", "payload (JSON Schema definition)", "what"],
    TOPIC_KINDS.map((kind) => {
      const t = TOPICS[kind];
      return [
        `\`${t.pattern}\``,
        t.sender,
        String(TOPIC_QOS),
        t.retain ? "yes" : "no",
        `\`${definition(kind)}\``,
        t.description,
      ];
    }),
  );
}

/** The fulfilment simulator's transitions, with the defaults of the settings that time them. */
export function fulfilmentSection(): string {
  const defaultOf = (key: string) =>
    key
      .split(".")
      .reduce<unknown>(
        (node, part) => (node as Record<string, unknown>)[part],
        FULFILMENT_DEFAULTS,
      );
  return table(
    ["from", "to", "when", "default"],
    TRANSITION_DOCS.map((t) => [
      t.from,
      t.to,
      t.when,
      [
        ...t.settings.map((k) => `\`${k}\` ${String(defaultOf(k))}`),
        ...(t.note ? [t.note] : []),
      ].join(", "),
    ]),
  );
}

/** The measurement webhooks' retry schedule (src/webhooks/retry-policy.ts). */
export function webhookRetriesSection(): string {
  const rows = scheduleTable();
  return table(
    ["attempt", "wait before it (±20 %)", "time since the first attempt (nominal)"],
    [
      ...rows.map((r) => [
        String(r.attempt),
        r.attempt === 1 ? "none: sent at once" : formatDuration(r.waitMs),
        formatDuration(r.sinceFirstMs),
      ]),
      [
        `${rows.length + 1}, …`,
        formatDuration(MAX_RETRY_MS),
        `until ${formatDuration(GIVE_UP_AFTER_MS)} after the delivery was created, the last attempt at that mark: then \`failed\``,
      ],
    ],
  );
}

export const SECTIONS: Record<string, () => string> = {
  catalogue: catalogueSection,
  supplies: suppliesSection,
  patients: patientsSection,
  errors: errorsSection,
  "mqtt-topics": mqttTopicsSection,
  fulfilment: fulfilmentSection,
  "webhook-retries": webhookRetriesSection,
};

/** README text with every generated section replaced by its current content. */
export function renderReadme(text: string): string {
  let out = text;
  for (const [name, make] of Object.entries(SECTIONS)) {
    const start = `<!-- generated:${name} -->`;
    const end = `<!-- /generated:${name} -->`;
    const from = out.indexOf(start);
    const to = out.indexOf(end);
    if (from < 0 || to < from) throw new Error(`README.md lacks the markers ${start} … ${end}`);
    out = `${out.slice(0, from + start.length)}\n${make()}\n${out.slice(to)}`;
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(README_PATH, renderReadme(readFileSync(README_PATH, "utf8")));
  process.stdout.write("README.md generated sections updated\n");
}
