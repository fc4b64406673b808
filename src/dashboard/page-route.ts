import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { FastifyInstance } from "fastify";

/** Where the dashboard page is served (README "Dashboard"). */
export const DASHBOARD_PATH = "/dashboard/";

const PAGE = readFileSync(new URL("./page.html", import.meta.url), "utf8");

/**
 * The page's inline script and style, allowed by their hashes (CSP Level 3 §8.4 "hash-source"):
 * nothing else may run or style the page, whatever text the lab's data puts on it.
 */
function contentSecurityPolicy(page: string): string {
  const hashes = (tag: string) =>
    [...page.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "g"))]
      .map((m) => `'sha256-${createHash("sha256").update(m[1]!).digest("base64")}'`)
      .join(" ");
  return [
    "default-src 'none'",
    `script-src ${hashes("script")}`,
    `style-src ${hashes("style")}`,
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

const POLICY = contentSecurityPolicy(PAGE);

/**
 * GET /dashboard/: one static page, no authentication of its own (it holds no data); what it
 * shows comes from the admin API with the token the user gives it (page.html).
 */
export function registerDashboard(app: FastifyInstance): void {
  app.get(DASHBOARD_PATH, { schema: { hide: true } }, async (_request, reply) =>
    reply
      .type("text/html; charset=utf-8")
      .header("content-security-policy", POLICY)
      .header("cache-control", "no-cache")
      .send(PAGE),
  );
}
