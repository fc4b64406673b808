/**
 * The step grid of a measuring range: every value a device reports is a whole multiple of its
 * resolution (schema `step`). Decimal steps such as 0.1 or 0.01 are not exact in binary floating
 * point, so "whole multiple" allows a relative error far below any step a device uses.
 */
export function onStepGrid(value: number, step: number): boolean {
  const multiples = value / step;
  return Math.abs(multiples - Math.round(multiples)) <= 1e-9 * Math.max(1, Math.abs(multiples));
}
