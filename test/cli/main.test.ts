import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/main.ts";
import { runCli } from "../catalogue/cli-io.ts";

// README "Commands": every error goes to stderr as `rpmlab: <CODE>: <message>`, the option
// parser's own usage errors included (E_USAGE, exit 2), so a script can match one prefix.
describe("rpmlab option parser errors", () => {
  it.each([
    [["profiles", "list", "--nope"], "unknown option '--nope'"],
    [["profiles", "show"], "missing required argument 'name'"],
    [["nosuch"], "unknown command 'nosuch'"],
    [["readings", "Vendor Scale", "--seed"], "option '--seed <seed>' argument missing"],
    [
      ["accounts"],
      "missing command: rpmlab accounts takes create, list, asr, status-metrics, auto-reorder",
    ],
    [["scenario"], "missing command: rpmlab scenario takes validate"],
    [["accounts", "nosuch"], "unknown command 'nosuch'"],
    [["help", "nosuch"], "unknown command 'nosuch'"],
    [["accounts", "help", "nosuch"], "unknown command 'nosuch'"],
    [
      [],
      "missing command: rpmlab takes profiles, readings, serve, accounts, keys, orders, billing, webhooks, dead-letters, controller, device, gateway, scenario, run, demo",
    ],
  ])("rpmlab %j is E_USAGE, exit 2, in the rpmlab: CODE: form", async (args, message) => {
    const { code, stdout, stderr } = await runCli(...args);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr.split("\n")[0]).toBe(`rpmlab: E_USAGE: ${message}`);
    // The command's usage still follows, as before.
    expect(stderr).toContain("Usage: rpmlab");
  });
});

describe("rpmlab help <command>", () => {
  it.each([
    [["help", "accounts"], "Usage: rpmlab accounts [options] [command]"],
    [["accounts", "help", "create"], "Usage: rpmlab accounts create [options] <client-domain>"],
  ])("rpmlab %j prints that command's help on stdout, exit 0", async (args, usage) => {
    const { code, stdout, stderr } = await runCli(...args);
    expect(code).toBe(0);
    expect(stderr).toBe("");
    expect(stdout.split("\n")[0]).toBe(usage);
  });
});

describe("rpmlab webhooks resend|test --help", () => {
  // README "rpmlab webhooks": `--timeout 10s`, written as a user writes it (and as serve's
  // --webhook-timeout shows it), not as milliseconds.
  it.each(["resend", "test"])("%s shows the --timeout default as 10s", async (command) => {
    const { code, stdout } = await runCli("webhooks", command, "--help");
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /--timeout <duration>\s+limit of the attempt, e\.g\. 10s \(default:\s+"10s"\)/,
    );
  });
});

describe("rpmlab --help texts", () => {
  // README "rpmlab device <cellular type>": "Time: real time by default". Help showed the
  // option's values but not what a run without it does.
  it("device --help says --speed runs in real time unless given", async () => {
    const { code, stdout } = await runCli("device", "--help");
    expect(code).toBe(0);
    expect(stdout.replace(/\s+/g, " ")).toContain(
      "--speed <factor> cellular types: virtual time, N times real time, or max (default: real time)",
    );
  });

  // Help cites what a user can open: the README, or the spec sections it names. The lab's own
  // work tracker is not published, so "issue 4 §1" in a help line leads nowhere.
  it("cite no internal issue numbers", () => {
    const texts: string[] = [];
    const walk = (command: Command): void => {
      texts.push(`${command.name()}: ${command.description()}`);
      for (const option of command.options)
        texts.push(`${command.name()} ${option.flags}: ${option.description}`);
      for (const sub of command.commands) walk(sub);
    };
    walk(buildProgram({ out: () => {}, err: () => {} }));
    expect(texts.length).toBeGreaterThan(50);
    expect(texts.filter((t) => /\bissue\s+\d/i.test(t))).toEqual([]);
  });
});

describe("number options", () => {
  // README "Commands": a number option takes decimal digits as written; 0x3C, 0o74, 0b1,
  // Infinity or an empty value is refused with E_CONFIG_INVALID naming the flag (exit 2).
  // The flags are checked before the store is opened, so no store is needed here.
  const none = "sqlite:/nonexistent/rpmlab-number-options.db";
  it.each([
    [["webhooks", "deliveries", "lab", "--limit", "0x10", "--store", none], "--limit", "0x10"],
    [["dead-letters", "list", "--limit", "", "--store", none], "--limit", ""],
    [["webhooks", "deliveries", "lab", "--page", "1e3", "--store", none], "--page", "1e3"],
    [["dead-letters", "list", "--page", "0x10", "--store", none], "--page", "0x10"],
    [
      ["accounts", "auto-reorder", "acme", "--strips-below", "0o74", "--store", none],
      "--strips-below",
      "0o74",
    ],
    [
      ["accounts", "auto-reorder", "acme", "--days-below", "Infinity", "--store", none],
      "--days-below",
      "Infinity",
    ],
  ])("rpmlab %j is E_CONFIG_INVALID naming the flag", async (args, flag, value) => {
    const { code, stderr } = await runCli(...args);
    expect(code).toBe(2);
    expect(stderr).toMatch(
      new RegExp(`^rpmlab: E_CONFIG_INVALID: ${flag} must be .*, got "${value}"\\n?$`),
    );
  });
});

describe("rpmlab serve option errors", () => {
  // README "Commands": an error names the option at fault, as --port, --host or --ingest-id's
  // do. Refused before anything starts, so nothing listens here.
  it.each([
    ["--rate-limit", "5"],
    ["--rate-limit", "0/s"],
  ])("serve %s %s is E_CONFIG_INVALID naming the flag", async (flag, value) => {
    const { code, stderr } = await runCli("serve", "--store", "memory", flag, value);
    expect(code).toBe(2);
    expect(stderr).toBe(
      `rpmlab: E_CONFIG_INVALID: ${flag} must be N/s, N/m, N/h or N/d with N >= 1 (e.g. 1/s, the real service's limit), or off; got "${value}"`,
    );
  });
});
