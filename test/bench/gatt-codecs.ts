/**
 * Encode + decode throughput of the GATT mappings, per profile, in metric records per second on
 * one core (the lead's target for generate + encode + decode is 200 000/s). Readings are drawn
 * beforehand from the test arbitraries, so only the codecs are timed.
 */
import fc from "fast-check";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { mappingFor } from "../../src/gatt/mapping.ts";
import { readingArb } from "../gatt/arbitraries.ts";

const catalogue = Catalogue.load();
const SECONDS = 0.5;

for (const profile of catalogue.profiles) {
  const mapping = mappingFor(profile);
  const readings = fc.sample(readingArb(profile), { numRuns: 2000, seed: 7 });
  const records = readings.reduce((n, r) => n + r.records.length, 0) / readings.length;
  for (const r of readings) mapping.decode(mapping.encode(r, profile), profile); // warm up
  let done = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < SECONDS) {
    for (const r of readings) mapping.decode(mapping.encode(r, profile), profile);
    done += readings.length;
    elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  }
  const perSecond = (done * records) / elapsed;
  process.stdout.write(
    `${profile.name.padEnd(28)} ${profile.gatt.mapping.padEnd(24)} ${Math.round(perSecond).toLocaleString("en").padStart(11)} records/s (encode+decode)\n`,
  );
}
