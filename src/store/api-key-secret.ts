import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Environment } from "./types.ts";

/**
 * API key secrets (spec 5; wire-formats "Auth": shown once, stored hashed, listed by prefix).
 * Format: `rpm_<dev|prod>_<32 base62 characters>` (about 190 bits).
 *
 * The secret comes from node:crypto, the one randomness in the lab that does not go through the
 * seeded Rng: a key reproducible from a scenario seed would be guessable by anyone with the
 * seed, so keys must not be reproducible.
 */
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const SECRET_LENGTH = 32;
/** Shown in listings: enough to tell keys apart, far too little to guess the rest. */
const PREFIX_LENGTH = 8;
const TAGS: Record<Environment, string> = { development: "dev", production: "prod" };
const KEY_PATTERN = /^rpm_(dev|prod)_([0-9A-Za-z]{32})$/;

export interface NewSecret {
  readonly key: string;
  readonly prefix: string;
  readonly hash: string;
}

/** `length` characters of base62 from node:crypto (not the seeded Rng, see above). */
export function randomBase62(length: number): string {
  let secret = "";
  while (secret.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 × 62: rejecting bytes above it keeps every character equally likely.
      if (byte < 248 && secret.length < length) secret += BASE62[byte % 62];
    }
  }
  return secret;
}

export function generateApiKey(environment: Environment): NewSecret {
  const secret = randomBase62(SECRET_LENGTH);
  const key = `rpm_${TAGS[environment]}_${secret}`;
  return { key, prefix: secret.slice(0, PREFIX_LENGTH), hash: hashApiKey(key) };
}

/** The environment a well-formed key names, or undefined for anything else. */
export function keyEnvironment(key: string): Environment | undefined {
  const m = KEY_PATTERN.exec(key);
  if (m === null) return undefined;
  return m[1] === "prod" ? "production" : "development";
}

/** The listed prefix of a well-formed key (its secret's first characters), or undefined. */
export function keyPrefix(key: string): string | undefined {
  return KEY_PATTERN.exec(key)?.[2]?.slice(0, PREFIX_LENGTH);
}

/** A key's listed prefix as a user may type it: `rpm_dev_AbCd1234…`, `AbCd1234` (tag, prefix). */
export const PREFIX_REF = new RegExp(
  `^(?:rpm_(dev|prod)_)?([0-9A-Za-z]{${PREFIX_LENGTH}})(?:…|\\.\\.\\.)?$`,
);

/** A whole key (or longer) anywhere in a text, a URL or a message: tag, listed prefix, the rest. */
const KEY_IN_TEXT = new RegExp(
  `rpm_(dev|prod)_([0-9A-Za-z]{${PREFIX_LENGTH}})[0-9A-Za-z]{${SECRET_LENGTH - PREFIX_LENGTH},}`,
  "g",
);

/**
 * `text` with every whole key written as its listed prefix (`rpm_dev_AbCd1234…`), for what is
 * logged or shown back: a key named in a URL (`DELETE …/keys/{key}/` revokes by the key itself)
 * must not end up in a server log, whose readers are not the key's holders.
 */
export function maskApiKeys(text: string): string {
  return text.replace(KEY_IN_TEXT, "rpm_$1_$2…");
}

/** SHA-256 hex: keys are long random strings, so a fast unsalted hash is enough. */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

/** Constant-time comparison of two hex hashes of equal length. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, "hex");
  const y = Buffer.from(b, "hex");
  return x.length === y.length && timingSafeEqual(x, y);
}
