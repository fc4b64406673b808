/**
 * The five shipping fields of an order's request body, wire name → field name: replacements
 * (wire-formats "Replacements") and ASR supply requests (spec 2.7) take the same ones.
 */
export const SHIPPING_FIELDS = [
  ["shipping_name", "shippingName"],
  ["shipping_address", "shippingAddress"],
  ["shipping_city", "shippingCity"],
  ["shipping_state", "shippingState"],
  ["shipping_zip_code", "shippingZipCode"],
] as const;
