import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { Catalogue } from "../catalogue/catalogue.ts";
import { type DataIssue, formatIssues, formatPath } from "../catalogue/loader.ts";
import { RpmlabError } from "../core/errors.ts";
import { nameUuid } from "../fulfilment/identifiers.ts";

/** The shipped supply catalogue, beside src/ in the package (as profiles/devices). */
export const DEFAULT_SUPPLIES_FILE = fileURLToPath(
  new URL("../../profiles/supplies.yaml", import.meta.url),
);

/** A supply type (spec 2.7 "Supply type"), as the ASR routes and services read it. */
export interface SupplyType {
  /** UUID v5 of the name (nameUuid("supply-type:<name>")): stable, never a device type's id. */
  readonly id: string;
  /** The exact supply_name clients order by (spec 2.7). */
  readonly name: string;
  readonly description: string;
  /** Absolute URL. */
  readonly image: string;
  /** Decimal string with two decimals, e.g. "15.00". */
  readonly upFrontCost: string;
  readonly shippingCost: string;
  /** Spec 2.7: the order must carry the device's gateway id or IMEI. */
  readonly hardwareUuidRequired: boolean;
  readonly deprecated: boolean;
  /** Current device type names (profiles/devices) the supply fits. */
  readonly compatibleDevices: readonly string[];
  /** Test strips in the pack; null for supplies that are not strips. */
  readonly strips: number | null;
}

const cost = z
  .string({ error: 'a decimal string with two decimals, quoted in YAML, e.g. "15.00"' })
  .regex(/^\d+\.\d{2}$/, 'a decimal string with two decimals, e.g. "15.00"');

const text = z
  .string()
  .min(1)
  .refine((s) => s.trim() === s, "no leading or trailing spaces");

/** One entry of profiles/supplies.yaml. */
const supplyEntrySchema = z.strictObject({
  /** Clients order by this exact string: no surrounding spaces to mistype. */
  name: text,
  description: text,
  image: z.url({ protocol: /^https?$/, error: "an absolute http(s) URL" }),
  up_front_cost: cost,
  shipping_cost: cost,
  hardware_uuid_required: z.boolean(),
  deprecated: z.boolean().default(false),
  compatible_devices: z.array(z.string().min(1)).min(1),
  /** Test strips in the pack; absent for supplies that are not strips. */
  strips: z.int().positive().optional(),
});
type SupplyEntry = z.output<typeof supplyEntrySchema>;

/** The whole file: `supplies:`, the list in the order supply-types/ serves it. */
const suppliesFileSchema = z.strictObject({
  supplies: z.array(z.unknown()).min(1),
});

/**
 * The ASR supply catalogue (spec 2.7, 4.5): every supply type of profiles/supplies.yaml, in file
 * order, by exact name and by id, and per compatible device type.
 */
export class SupplyCatalogue {
  private readonly byNameMap = new Map<string, SupplyType>();
  private readonly byIdMap = new Map<string, SupplyType>();
  /** Device types that use test strips: those a strip supply fits (glucometers). */
  private readonly stripDevices: ReadonlySet<string>;

  /** `devices` resolves legacy device names in forDevice (spec 2.4: Vendor BPM - L). */
  constructor(
    private readonly all: readonly SupplyType[],
    private readonly devices?: Catalogue,
  ) {
    for (const type of all) {
      if (this.byNameMap.has(type.name)) {
        throw new RpmlabError("E_PROFILE_INVALID", `supply type "${type.name}" is defined twice`, {
          field: "name",
        });
      }
      this.byNameMap.set(type.name, type);
      this.byIdMap.set(type.id, type);
    }
    this.stripDevices = new Set(
      all.filter((t) => t.strips !== null).flatMap((t) => t.compatibleDevices),
    );
  }

  /**
   * Loads and validates a supply file, reporting every problem at once (E_PROFILE_INVALID, each
   * as `file: supplies[i].field: supply "<name>": message`); compatible_devices must be current
   * names of `devices` (default: the shipped device catalogue).
   */
  static load(file: string = DEFAULT_SUPPLIES_FILE, devices?: Catalogue): SupplyCatalogue {
    const catalogue = devices ?? Catalogue.load();
    return new SupplyCatalogue(parseSupplies(file, catalogue), catalogue);
  }

  /** Every supply type, in file order (deprecated ones included). */
  get types(): readonly SupplyType[] {
    return this.all;
  }

  /** Spec 2.7: supply_name "must equal a supply type name exactly" (no case or space folding). */
  byName(name: string): SupplyType | undefined {
    return this.byNameMap.get(name);
  }

  byId(id: string): SupplyType | undefined {
    return this.byIdMap.get(id);
  }

  /** Whether a device type (its current name) takes test strips: what strip counts are kept for. */
  usesStrips(deviceTypeName: string): boolean {
    return this.stripDevices.has(deviceTypeName);
  }

  /** The supply types compatible with a device type (a legacy name counts as its current one). */
  forDevice(deviceTypeName: string): SupplyType[] {
    const name = this.devices?.find(deviceTypeName)?.name ?? deviceTypeName;
    return this.all.filter((t) => t.compatibleDevices.includes(name));
  }
}

/**
 * A supply type's id: UUID v5 in rpmlab's namespace, as hwi-device-types ids are
 * (nameUuid("device-type:<name>")), under its own "supply-type:" prefix so it never equals one.
 */
export function supplyTypeId(name: string): string {
  return nameUuid(`supply-type:${name}`);
}

function toSupplyType(e: SupplyEntry): SupplyType {
  return {
    id: supplyTypeId(e.name),
    name: e.name,
    description: e.description,
    image: e.image,
    upFrontCost: e.up_front_cost,
    shippingCost: e.shipping_cost,
    hardwareUuidRequired: e.hardware_uuid_required,
    deprecated: e.deprecated,
    compatibleDevices: e.compatible_devices,
    strips: e.strips ?? null,
  };
}

function parseSupplies(file: string, devices: Catalogue): SupplyType[] {
  const issues: DataIssue[] = [];
  const fail = (): never => {
    throw new RpmlabError(
      "E_PROFILE_INVALID",
      `${issues.length} problem(s) in ${file}:\n${formatIssues(issues)}`,
      { file, issues },
    );
  };
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(file, "utf8"));
  } catch (error) {
    // As loader.ts: the first line of the parser's message says where.
    const [firstLine = ""] = (error as Error).message.split("\n");
    issues.push({ file, path: "(root)", message: `cannot read: ${firstLine.replace(/:$/, "")}` });
    return fail();
  }
  const top = suppliesFileSchema.safeParse(raw);
  if (!top.success) {
    for (const i of top.error.issues)
      issues.push({ file, path: formatPath(i.path), message: i.message });
    return fail();
  }

  const entries: SupplyEntry[] = [];
  const seen = new Map<string, number>();
  top.data.supplies.forEach((item, index) => {
    const raw = (typeof item === "object" && item !== null ? item : {}) as Record<string, unknown>;
    const who = typeof raw.name === "string" && raw.name !== "" ? `supply "${raw.name}": ` : "";
    const issue = (path: PropertyKey[], message: string) =>
      issues.push({ file, path: formatPath(["supplies", index, ...path]), message: who + message });
    const parsed = supplyEntrySchema.safeParse(item);
    if (parsed.success) entries.push(parsed.data);
    else for (const i of parsed.error.issues) issue(i.path, i.message);
    // The checks across entries and against the device catalogue run even when another field of
    // the entry is wrong, so one run lists every problem.
    if (typeof raw.name === "string") {
      // Names differing only in case or spacing would be two supplies a client cannot tell apart.
      const key = raw.name.trim().toLowerCase().replace(/\s+/g, " ");
      const earlier = seen.get(key);
      if (earlier === undefined) seen.set(key, index);
      else issue(["name"], `the name of supplies[${earlier}] already (ignoring case and spaces)`);
    }
    const compatible = Array.isArray(raw.compatible_devices) ? raw.compatible_devices : [];
    compatible.forEach((device: unknown, d) => {
      if (typeof device !== "string" || device === "") return; // the schema said so
      const profile = devices.find(device);
      if (profile === undefined) issue(["compatible_devices", d], `unknown device "${device}"`);
      else if (profile.name !== device)
        issue(["compatible_devices", d], `"${device}" is a legacy name; use "${profile.name}"`);
      else if (compatible.indexOf(device) !== d)
        issue(["compatible_devices", d], `"${device}" is listed twice`);
    });
  });
  if (issues.length > 0) return fail();
  return entries.map(toSupplyType);
}
