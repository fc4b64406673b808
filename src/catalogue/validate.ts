import { RpmlabError } from "../core/errors.ts";
import { type DataIssue, formatIssues, type LoadResult, loadYamlDir } from "./loader.ts";
import { type Profile, profileSchema } from "./schema.ts";

type ProfileItem = { file: string; value: Profile };

/**
 * Rules across profile files: a device name, current or legacy, names one profile only (a legacy
 * name resolves to exactly one current name, spec 2.4), and so does a SKU; profiles of one
 * sensor code are one family with the same metrics (the four cuffs of code 10): ingestion and
 * the gateway decode a code one way, whichever of its types sent it (src/ingest/resolve.ts).
 */
export function crossProfileIssues(items: readonly ProfileItem[]): DataIssue[] {
  const issues: DataIssue[] = [];
  const nameOwner = new Map<string, string>();
  const skuOwner = new Map<string, string>();
  const codeOwner = new Map<string, ProfileItem>();
  for (const item of items) {
    const { file, value } = item;
    issues.push(...sensorCodeIssues(codeOwner, item));
    [value.name, ...value.legacy_names].forEach((name, i) => {
      const owner = nameOwner.get(name);
      const path = i === 0 ? "name" : `legacy_names[${i - 1}]`;
      if (owner === undefined) nameOwner.set(name, file);
      else
        issues.push({ file, path, message: `device name "${name}" is already used in ${owner}` });
    });
    const owner = skuOwner.get(value.sku);
    if (owner === undefined) skuOwner.set(value.sku, file);
    else
      issues.push({ file, path: "sku", message: `sku "${value.sku}" is already used in ${owner}` });
  }
  return issues;
}

function sensorCodeIssues(owners: Map<string, ProfileItem>, item: ProfileItem): DataIssue[] {
  const code = item.value.sensor_code;
  if (code === null) return [];
  const owner = owners.get(code);
  if (owner === undefined) {
    owners.set(code, item);
    return [];
  }
  const shared = `sensor code "${code}" is used in ${owner.file}`;
  if (owner.value.family !== item.value.family) {
    const message = `${shared} by family ${owner.value.family}; a sensor code is one family`;
    return [{ file: item.file, path: "sensor_code", message }];
  }
  if (JSON.stringify(owner.value.metrics) !== JSON.stringify(item.value.metrics)) {
    const message = `${shared} with other metrics; the types of one sensor code report the same metrics`;
    return [{ file: item.file, path: "metrics", message }];
  }
  return [];
}

/** Loads every profile of a folder: each file against the schema, then the rules across files. */
export function loadProfiles(dir: string): LoadResult<Profile> {
  const result = loadYamlDir(dir, profileSchema);
  const issues = [...(result.ok ? [] : result.issues), ...crossProfileIssues(result.items)];
  return issues.length > 0 ? { ok: false, issues, items: result.items } : result;
}

function invalid(dir: string, issues: readonly DataIssue[]): RpmlabError {
  return new RpmlabError(
    "E_PROFILE_INVALID",
    `${issues.length} problem(s) in ${dir}:\n${formatIssues(issues)}`,
    { file: dir, issues },
  );
}

/** Every profile of a folder; throws one E_PROFILE_INVALID listing every issue of every file. */
export function loadProfilesOrThrow(dir: string): Profile[] {
  const result = loadProfiles(dir);
  if (!result.ok) throw invalid(dir, result.issues);
  return result.items.map((item) => item.value);
}

/** `rpmlab profiles validate`: "N profiles valid", or E_PROFILE_INVALID with every issue. */
export function validateProfileDir(dir: string): string {
  const count = loadProfilesOrThrow(dir).length;
  return `${count} profile${count === 1 ? "" : "s"} valid`;
}
