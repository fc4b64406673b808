/**
 * Benchmark: metric records generated, encoded and decoded per second on one core, the path
 * every virtual device and the ingestion core share. Target ≥ 200,000 records/s (issue 2), so
 * that generation never limits a fleet. Prints figures; asserts nothing.
 *
 *   node --import tsx test/bench/readings-pipeline.ts [days]
 */
import { performance } from "node:perf_hooks";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { Rng } from "../../src/core/rng.ts";
import { mappingFor } from "../../src/gatt/mapping.ts";
import { generateReadings } from "../../src/readings/generate.ts";
import type { GeneratedReading } from "../../src/readings/generated.ts";
import { PatientModels } from "../../src/readings/patients.ts";

const TARGET = 200_000;
const days = Number(process.argv[2] ?? 365);
const catalogue = Catalogue.load();
const patients = PatientModels.load();
const cohort = patients.models.map((patient, i) => ({ patient, rng: new Rng(`bench/${i}`) }));

interface Stage {
  generate: number;
  encode: number;
  decode: number;
  records: number;
  readings: number;
}

/** One pass over every patient model × every device profile. */
function pass(label: string): Stage {
  const stage: Stage = { generate: 0, encode: 0, decode: 0, records: 0, readings: 0 };
  for (const { patient, rng } of cohort) {
    for (const profile of catalogue.profiles) {
      const mapping = mappingFor(profile);
      let t = performance.now();
      const readings: GeneratedReading[] = generateReadings({
        devices: [profile],
        patient,
        rng: rng.fork(label),
        days,
      });
      stage.generate += performance.now() - t;
      t = performance.now();
      const encoded = readings.map((r, i) => mapping.encode(r, profile, i & 0xffff));
      stage.encode += performance.now() - t;
      t = performance.now();
      for (const values of encoded) stage.records += mapping.decode(values, profile).records.length;
      stage.decode += performance.now() - t;
      stage.readings += readings.length;
    }
  }
  return stage;
}

const rate = (records: number, ms: number) => Math.round((records / ms) * 1000);
const fmt = (n: number) => n.toLocaleString("en-US");

pass("warm-up"); // JIT warm-up: the first pass compiles the hot paths
const s = pass("measured");
const total = s.generate + s.encode + s.decode;
console.log(
  `readings pipeline, ${cohort.length} patient models × ${catalogue.profiles.length} device types × ${days} days, one core`,
);
console.log(`  readings: ${fmt(s.readings)}   metric records: ${fmt(s.records)}`);
console.log(`  generate: ${fmt(rate(s.records, s.generate))} records/s`);
console.log(`  encode:   ${fmt(rate(s.records, s.encode))} records/s`);
console.log(`  decode:   ${fmt(rate(s.records, s.decode))} records/s`);
console.log(
  `  generate + encode + decode: ${fmt(rate(s.records, total))} records/s (target ≥ ${fmt(TARGET)}: ${rate(s.records, total) >= TARGET ? "met" : "NOT met"})`,
);
console.log(`  heap used after run: ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(1)} MiB`);
