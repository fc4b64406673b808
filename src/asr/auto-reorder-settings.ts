import { FieldErrorCollector } from "../core/field-errors.ts";
import type { AutoReorderSettings } from "../store/types-asr.ts";
import type { SupplyCatalogue } from "./supply-catalogue.ts";

/** What automatic reorder orders unless told otherwise. */
export const DEFAULT_REORDER_SUPPLY = "Glucometer Test Strips (50)";

/** The wire form of an account's automatic reorder (lab admin API, scenarios). */
export interface AutoReorderJson {
  readonly strips_below: number | null;
  readonly days_below: number | null;
  readonly supply_name: string;
}

export function autoReorderJson(s: AutoReorderSettings): AutoReorderJson {
  return { strips_below: s.stripsBelow, days_below: s.daysBelow, supply_name: s.supplyName };
}

/**
 * Checks thresholds a caller sent (types already checked by the body schema): at least one of
 * them, and a strip supply that can still be ordered. 400 keyed by field otherwise.
 */
export function autoReorderSettings(
  supplies: SupplyCatalogue,
  input: { strips_below?: number | null; days_below?: number | null; supply_name?: string },
): AutoReorderSettings {
  const errors = new FieldErrorCollector();
  const stripsBelow = input.strips_below ?? null;
  const daysBelow = input.days_below ?? null;
  if (stripsBelow === null && daysBelow === null) {
    errors.add(
      "non_field_errors",
      "Set strips_below, days_below or both (DELETE turns automatic reorder off).",
    );
  }
  // Trimmed, as supply-requests/ reads supply_name (the CLI's --supply arrives untrimmed).
  const supplyName = input.supply_name?.trim() ?? DEFAULT_REORDER_SUPPLY;
  const problem = stripSupplyProblem(supplies, supplyName);
  if (problem !== undefined) errors.add("supply_name", problem);
  errors.throwIfAny();
  return { stripsBelow, daysBelow, supplyName };
}

/** Why `name` cannot be what automatic reorder orders: no test strip supply, or deprecated. */
export function stripSupplyProblem(supplies: SupplyCatalogue, name: string): string | undefined {
  const type = supplies.byName(name);
  if (type === undefined || type.strips === null) {
    return `"${name}" is not a test strip supply (asr/supply-types/).`;
  }
  if (type.deprecated) return `"${name}" is deprecated and can no longer be ordered.`;
  return undefined;
}
