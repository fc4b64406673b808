import { quotedValue } from "../core/clip.ts";
import { RpmlabError } from "../core/errors.ts";

/**
 * A client domain is a path segment of every URL (spec 5.3): a DNS-label-like name, letters,
 * digits, dots and hyphens, 1 to 64 characters, starting and ending with a letter or digit.
 */
export const CLIENT_DOMAIN_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,62}[A-Za-z0-9])?$/;

/** What a client domain must be, as errors say it. */
export const CLIENT_DOMAIN_RULE =
  "1-64 letters, digits, dots or hyphens, starting and ending with a letter or digit";

/** A client domain given on the command line; E_CONFIG_INVALID (a usage error) naming `option`. */
export function parseClientDomain(text: string, option: string): string {
  if (!CLIENT_DOMAIN_PATTERN.test(text)) {
    throw new RpmlabError(
      "E_CONFIG_INVALID",
      `${option} ${quotedValue(text)} is not a client domain: ${CLIENT_DOMAIN_RULE}`,
      { field: option.replace(/^--|^<|>$/g, ""), value: text },
    );
  }
  return text;
}
