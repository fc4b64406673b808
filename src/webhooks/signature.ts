import { createHmac, timingSafeEqual } from "node:crypto";
import { randomBase62 } from "../store/api-key-secret.ts";

/**
 * rpmlab's opt-in webhook signature (the real service documents none; wire-formats allows "an
 * HMAC signature header as an opt-in extra"). A webhook with a signing secret gets, on every
 * attempt, `X-Rpmlab-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, in the
 * manner of Stripe's: the timestamp is signed with the body, so a receiver that refuses old
 * timestamps refuses replays. The README shows a receiver's check.
 */
export const SIGNATURE_HEADER = "X-Rpmlab-Signature";
/** Secrets the lab generates: `whsec_` and 32 base62 characters from node:crypto. */
export const SECRET_PREFIX = "whsec_";
/** What a receiver should accept: five minutes either way. */
export const SIGNATURE_TOLERANCE_S = 300;

/** A fresh secret (node:crypto, not the seeded Rng: a secret must not follow from a seed). */
export function generateSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBase62(32)}`;
}

/** The header value for a body sent at `atMs`. */
export function signatureHeader(secret: string, body: string, atMs: number): string {
  const t = Math.floor(atMs / 1000);
  return `t=${t},v1=${hmac(secret, `${t}.${body}`)}`;
}

/**
 * A receiver's check, as the README shows it: a v1 signature of the body with this secret, made
 * at most `toleranceS` seconds from `nowMs`.
 */
export function verifySignature(
  header: string | undefined,
  body: string,
  secret: string,
  nowMs: number,
  toleranceS = SIGNATURE_TOLERANCE_S,
): boolean {
  // A request without the header (node:http's undefined) is unsigned: refused, not a TypeError.
  if (header === undefined) return false;
  const parts = new Map(
    header.split(",").map((part) => {
      const at = part.indexOf("=");
      return [part.slice(0, at).trim(), part.slice(at + 1).trim()] as const;
    }),
  );
  const t = Number(parts.get("t"));
  const v1 = parts.get("v1") ?? "";
  if (!Number.isInteger(t) || Math.abs(nowMs / 1000 - t) > toleranceS) return false;
  // Exactly the 64 hex digits signatureHeader writes: Buffer.from(…, "hex") stops at the first
  // non-hex character, so a signature with junk appended would otherwise pass.
  if (!/^[0-9a-f]{64}$/.test(v1)) return false;
  const given = Buffer.from(v1, "hex");
  const expected = Buffer.from(hmac(secret, `${t}.${body}`), "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function hmac(secret: string, text: string): string {
  return createHmac("sha256", secret).update(text, "utf8").digest("hex");
}
