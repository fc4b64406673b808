import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { buildApp } from "../../src/api/app.ts";
import { Rng } from "../../src/core/rng.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { openStore } from "../../src/store/open.ts";
import { runCli } from "../catalogue/cli-io.ts";
import { T0 } from "./helpers.ts";

/** `rpmlab accounts …` and `rpmlab keys …` through main(), on a temporary SQLite file. */
describe("rpmlab accounts / keys", () => {
  let dir: string;
  let store: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "rpmlab-cli-"));
    store = `sqlite:${join(dir, "lab.db")}`;
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  const cli = (...args: string[]) => runCli(...args, "--store", store);

  it("creates and lists accounts, as text and as JSON", async () => {
    const created = await cli("accounts", "create", "acme-dev");
    expect(created).toMatchObject({ code: 0, stderr: "" });
    expect(created.stdout).toMatch(
      /^created account acme-dev \(development, ASR off\), id [0-9a-f-]{36}/,
    );
    const prod = await cli(
      "accounts",
      "create",
      "acme",
      "--environment",
      "production",
      "--asr",
      "--json",
    );
    expect(JSON.parse(prod.stdout)).toMatchObject({
      client_domain: "acme",
      environment: "production",
      asr_enabled: true,
    });
    const list = await cli("accounts", "list", "--json");
    expect(
      JSON.parse(list.stdout)
        .map((a: { client_domain: string }) => a.client_domain)
        .sort(),
    ).toEqual(["acme", "acme-dev"]);
    const table = await cli("accounts", "list");
    expect(table.stdout.split("\n")[0]).toMatch(/^CLIENT DOMAIN\s+ENVIRONMENT\s+ASR/);
    expect(table.stdout).toContain("acme-dev");
  });

  it("sets, shows and turns off automatic strip reorder; a bad flag is a usage error naming it", async () => {
    await cli("accounts", "create", "acme", "--asr");
    const set = await cli("accounts", "auto-reorder", "acme", "--days-below", "7", "--json");
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({
      strips_below: null,
      days_below: 7,
      supply_name: "Glucometer Test Strips (50)",
    });
    const text = await cli(
      "accounts",
      "auto-reorder",
      "acme",
      "--strips-below",
      "15",
      "--supply",
      // Surrounding spaces trimmed, as the admin API and supply-requests/ trim supply_name.
      " Glucometer Test Strips (100) ",
    );
    expect(text.stdout.trim()).toBe(
      "automatic reorder of acme: Glucometer Test Strips (100) at fewer than 15 strips",
    );
    const opened = await openStore(store, {
      clock: new VirtualClock({ startMs: T0 }),
      rng: new Rng("cli"),
    });
    try {
      const acme = (await opened.accounts.getByClientDomain("acme"))!;
      expect(await opened.asrSettings.autoReorder(acme.id)).toEqual({
        stripsBelow: 15,
        daysBelow: null,
        supplyName: "Glucometer Test Strips (100)",
      });
    } finally {
      await opened.close();
    }
    for (const [args, message] of [
      [[], /give --strips-below, --days-below or both/],
      [
        ["--strips-below", "0"],
        /--strips-below must be a whole number from 1 to 2147483647, got "0"/,
      ],
      [["--days-below", "99999999999"], /--days-below must be a whole number from 1 to 2147483647/],
      [["--off", "--strips-below", "5"], /--off turns automatic reorder off: give it alone/],
      [
        ["--days-below", "3", "--supply", "Lancets (100)"],
        /--supply: "Lancets \(100\)" is not a test strip supply/,
      ],
    ] as const) {
      const bad = await cli("accounts", "auto-reorder", "acme", ...args);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(message);
    }
    const off = await cli("accounts", "auto-reorder", "acme", "--off");
    expect(off.stdout.trim()).toBe("automatic reorder of acme: off");
    expect((await cli("accounts", "auto-reorder", "nobody", "--off")).code).toBe(1);
  });

  it("fails clearly: a taken domain (1), a bad environment or domain (2)", async () => {
    await cli("accounts", "create", "acme-dev");
    const again = await cli("accounts", "create", "ACME-DEV");
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("E_STORE_CONFLICT");
    const env = await cli("accounts", "create", "x", "--environment", "staging");
    expect(env.code).toBe(2);
    expect(env.stderr).toContain("E_CONFIG_INVALID");
    const bad = await cli("accounts", "create", "a/b");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('E_CONFIG_INVALID: <client-domain> "a/b" is not a client domain');
  });

  it("toggles ASR", async () => {
    await cli("accounts", "create", "acme-dev");
    const on = await cli("accounts", "asr", "acme-dev", "on", "--json");
    expect(JSON.parse(on.stdout).asr_enabled).toBe(true);
    expect((await cli("accounts", "asr", "acme-dev", "maybe")).code).toBe(2);
  });

  it("prints a new key once with a warning; the key authenticates against the API", async () => {
    await cli("accounts", "create", "acme-dev");
    const created = await cli("keys", "create", "acme-dev", "--name", "ci");
    expect(created.code).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^rpm_dev_[0-9A-Za-z]{32}$/);
    expect(created.stderr).toContain("not shown again");

    const clock = new VirtualClock({ startMs: T0 });
    const opened = await openStore(store, { clock, rng: new Rng("cli-test") });
    const app = buildApp({ store: opened, clock, config: { adminToken: "t" } });
    try {
      const res = await app.inject({
        method: "GET",
        url: "/clients/acme-dev/hwi/hwi-patients/",
        headers: { authorization: `Api-Key ${key}` },
      });
      expect(res.statusCode).toBe(200);
    } finally {
      await app.close();
      await opened.close();
    }

    const list = await cli("keys", "list", "acme-dev");
    expect(list.stdout).toContain(`${key.slice(0, 16)}…`);
    expect(list.stdout).not.toContain(key);
    const json = JSON.parse((await cli("keys", "list", "acme-dev", "--json")).stdout);
    expect(json).toEqual([
      expect.objectContaining({ name: "ci", prefix: key.slice(0, 16), revoked_at: null }),
    ]);
  });

  it("revokes by prefix or id, and says when a key was already revoked", async () => {
    await cli("accounts", "create", "acme-dev");
    const created = JSON.parse((await cli("keys", "create", "acme-dev", "--json")).stdout);
    const revoked = await cli("keys", "revoke", "acme-dev", created.prefix);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toBe(`revoked key ${created.prefix}… (id ${created.id})`);
    const again = await cli("keys", "revoke", "acme-dev", created.id);
    expect(again.stdout).toMatch(/was already revoked at \d{4}-/);
    const unknown = await cli("keys", "revoke", "acme-dev", "rpm_dev_nothing1");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("E_STORE_NOT_FOUND");
    const noAccount = await cli("keys", "list", "nobody");
    expect(noAccount.code).toBe(1);
  });

  it("reads only a store that exists: a mistyped path is an error, not an empty new lab", async () => {
    const typo = join(dir, "typo", "lab.db");
    const listed = await runCli("accounts", "list", "--store", `sqlite:${typo}`);
    expect(listed.code).toBe(1);
    expect(listed.stderr).toContain(`E_STORE_NOT_FOUND: no store at ${typo}`);
    expect(existsSync(join(dir, "typo"))).toBe(false);
    expect((await runCli("accounts", "create", "acme-dev", "--store", `sqlite:${typo}`)).code).toBe(
      0,
    );
    expect((await runCli("accounts", "list", "--store", `sqlite:${typo}`)).stdout).toContain(
      "acme-dev",
    );
  });

  it("names $RPMLAB_STORE, not --store, when the store a command cannot use came from it", async () => {
    const typo = join(dir, "typo", "lab.db");
    vi.stubEnv("RPMLAB_STORE", `sqlite:${typo}`);
    try {
      const listed = await runCli("accounts", "list");
      expect(listed.code).toBe(1);
      expect(listed.stderr).toContain(`no store at ${typo} ($RPMLAB_STORE sqlite:${typo})`);
      vi.stubEnv("RPMLAB_STORE", "memory");
      const memory = await runCli("accounts", "list");
      expect(memory.code).toBe(2);
      expect(memory.stderr).toContain(
        "E_USAGE: $RPMLAB_STORE memory is a store inside one process",
      );
      vi.stubEnv("RPMLAB_STORE", "mysql://x");
      const bad = await runCli("accounts", "list");
      expect(bad.stderr).toContain('E_CONFIG_INVALID: $RPMLAB_STORE: invalid store "mysql://x"');
      // And --store, when the flag is at fault: "invalid store" alone said neither.
      const flag = await runCli("accounts", "list", "--store", "foo");
      expect(flag.code).toBe(2);
      expect(flag.stderr).toContain('E_CONFIG_INVALID: --store: invalid store "foo"');
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("names the option or argument at fault in a bad environment, ASR or status-metrics choice", async () => {
    const env = await cli("accounts", "create", "acme", "--environment", "staging");
    expect(env.code).toBe(2);
    expect(env.stderr).toContain(
      'E_CONFIG_INVALID: --environment must be development or production (or dev, prod), got "staging"',
    );
    await cli("accounts", "create", "acme-dev");
    const asr = await cli("accounts", "asr", "acme-dev", "maybe");
    expect(asr.stderr).toContain('E_USAGE: accounts asr <on|off>: expected on or off, got "maybe"');
    const metrics = await cli("accounts", "status-metrics", "acme-dev", "drop");
    expect(metrics.stderr).toContain(
      'E_USAGE: accounts status-metrics <send|omit>: expected send or omit, got "drop"',
    );
  });

  it("revokes the key itself, and nothing for a text that only starts like a key", async () => {
    await cli("accounts", "create", "acme-dev");
    const created = JSON.parse((await cli("keys", "create", "acme-dev", "--json")).stdout);
    const secret = created.key.slice("rpm_dev_".length);
    for (const lookalike of [
      `rpm_prod_${secret.slice(0, 8)}`,
      `rpm_prod_${secret.slice(0, 8)}XXXXXXXX`,
      `rpm_dev_${secret.slice(0, 8)}${"X".repeat(24)}`,
    ]) {
      const refused = await cli("keys", "revoke", "acme-dev", lookalike);
      expect(refused.code, lookalike).toBe(1);
      expect(refused.stderr).toContain("E_STORE_NOT_FOUND");
    }
    const revoked = await cli("keys", "revoke", "acme-dev", created.key, "--json");
    expect(JSON.parse(revoked.stdout)).toMatchObject({ id: created.id, already_revoked: false });
    const again = await cli("keys", "revoke", "acme-dev", created.key, "--json");
    expect(JSON.parse(again.stdout)).toMatchObject({ id: created.id, already_revoked: true });
  });
});
