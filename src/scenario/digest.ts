import { createHash } from "node:crypto";

/**
 * A fingerprint of what a run produced: the stored measurements and the webhook bodies
 * delivered. Two runs of one scenario with one seed must print the same digest, whatever order
 * the store listed rows in or the dispatcher's lanes delivered them in; any changed value changes
 * it.
 *
 * Canonical form: each measurement as JSON with object keys sorted at every depth, the list
 * sorted; each webhook body parsed and re-serialised the same way (a body that is not JSON is
 * kept as its text), the list sorted. Each item enters the hash with its section and byte length
 * before it, so no two different lists hash the same input.
 */
export function scenarioDigest(
  measurements: readonly Record<string, unknown>[],
  webhookBodies: readonly string[],
): string {
  const hash = createHash("sha256");
  const feed = (section: string, items: string[]) => {
    items.sort();
    hash.update(`${section} ${items.length}\n`);
    for (const item of items) hash.update(`${Buffer.byteLength(item)}:${item}\n`);
  };
  feed(
    "measurements",
    measurements.map((m) => canonicalJson(m)),
  );
  feed("webhooks", webhookBodies.map(canonicalBody));
  return hash.digest("hex");
}

function canonicalBody(body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body;
  }
  return canonicalJson(parsed);
}

/** JSON.stringify with object keys sorted at every depth; bigints written as their digits. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? "null";
}

function sortKeys(value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (typeof value !== "object" || value === null) return value;
  // Dates and other objects with toJSON serialise as JSON.stringify would write them.
  const json = (value as { toJSON?: unknown }).toJSON;
  if (typeof json === "function") return sortKeys(json.call(value));
  if (Array.isArray(value)) return value.map(sortKeys);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    out[key] = sortKeys((value as Record<string, unknown>)[key]);
  }
  return out;
}
