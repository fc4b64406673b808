import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { serveBanner } from "../../src/cli/serve.ts";
import { fulfilmentConfig } from "../../src/config/fulfilment-config.ts";
import { serveConfig } from "../../src/config/serve-config.ts";
import { runCli } from "../catalogue/cli-io.ts";
import { ADMIN_TOKEN, type Lab, makeLab } from "./helpers.ts";
import { activate, BPM, hwiCall } from "./hwi-fixtures.ts";

const QUIET = fulfilmentConfig({
  probabilities: {
    stock_shortage: 0,
    delivery_issue: 0,
    delivery_issue_signature: 0,
    carrier_hold: 0,
  },
});

/** `rpmlab orders …` and `rpmlab billing` against a listening lab (port 0), as a user runs them. */
describe("rpmlab orders / billing", () => {
  let lab: Lab;
  let url: string;
  beforeEach(async () => {
    lab = await makeLab({ config: { fulfilment: QUIET } });
    await lab.app.listen({ host: "127.0.0.1", port: 0 });
    url = `http://127.0.0.1:${(lab.app.server.address() as AddressInfo).port}`;
  });
  afterEach(() => lab.close());

  const cli = (...args: string[]) => runCli(...args, "--url", url, "--admin-token", ADMIN_TOKEN);

  async function order(externalId: string) {
    const call = hwiCall(lab);
    await call("POST", "hwi-patients/", {
      external_id: externalId,
      address: "12 Main Street",
      city: "Irvine",
      state: "CA",
      zip_code: "92614",
    });
    return activate(lab, { device: { name: BPM }, patient: { external_id: externalId } });
  }

  it("serve's banner names an orders command that works as printed", async () => {
    const placed = await order("P-1");
    const info = {
      base_url: url,
      dashboard_url: `${url}/dashboard/`,
      client_domain: "acme",
      api_key: "key",
      admin_token: ADMIN_TOKEN,
      mqtt_url: "mqtt://127.0.0.1:1883",
    };
    const banner = serveBanner(info, serveConfig({ store: "memory" }, {}));
    const hint = /\(rpmlab (orders list [^)]*)\)/.exec(banner)?.[1];
    expect(hint, banner).toBeDefined();
    const listed = await runCli(...hint!.split(" "));
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(placed.id);
  });

  it("lists, advances, injects and cancels orders through the admin API", async () => {
    const a = await order("P-1");
    const b = await order("P-2");
    const listed = await cli("orders", "list");
    expect(listed).toMatchObject({ code: 0, stderr: "" });
    expect(listed.stdout.split("\n")[0]).toMatch(/^ID\s+KIND\s+ACCOUNT\s+STATUS\s+CARRIER/);
    expect(listed.stdout).toContain(a.id);
    expect(listed.stdout).toMatch(/Ready to Ship\s+Dropshipped/);

    const advanced = await cli("orders", "advance", a.id, "Out for Delivery", "--json");
    expect(advanced.code, advanced.stderr).toBe(0);
    expect(JSON.parse(advanced.stdout)).toMatchObject({ status: "Out for Delivery" });

    const delivered = await cli("orders", "inject", a.id, "delivered", "--detail", "Porch");
    expect(delivered.code, delivered.stderr).toBe(0);
    expect(delivered.stdout).toMatch(
      new RegExp(`^order ${a.id} \\(device, acme-dev\\): Delivered`),
    );
    expect(delivered.stdout).toMatch(/Delivered\s+Porch/);

    const shipped = JSON.parse(
      (await cli("orders", "list", "--status", "pending", "--json")).stdout,
    );
    expect(shipped.map((o: { id: string }) => o.id)).toEqual([b.id]);
    const cancelled = await cli("orders", "cancel", b.id, "--detail", "Patient moved away");
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toContain("cancelled, removed");
    // The answer is the order's only record once it is removed: the admin's reason is in it.
    expect(cancelled.stdout).toMatch(/Cancelled\s+Patient moved away/);
    expect((await cli("orders", "list", "--json")).stdout).not.toContain(b.id);
  });

  it("shows the carrier history with the status and its text apart, however long the status", async () => {
    await order("P-1");
    const duplicate = await activate(lab, {
      device: { name: BPM },
      patient: { external_id: "P-1" },
    });
    const shown = await cli("orders", "show", duplicate.id);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/ {2}Client Action Required {2}Held for the client: duplicate/);
  });

  it("lists every order, past the 1,000 of one page", async () => {
    const account = (await lab.store.accounts.getByClientDomain("acme-dev"))!;
    await lab.store.transaction(async (tx) => {
      for (let i = 0; i < 1001; i++) {
        const device = await tx.devices.create(account.id, {
          name: "Vendor Scale",
          sensorCode: "34",
          status: "Delivered",
        });
        await tx.shipments.create(account.id, {
          id: device.id,
          kind: "device",
          deviceId: device.id,
          status: "Delivered",
        });
      }
    });
    const latest = await order("P-1");
    const listed = await cli("orders", "list", "--json");
    expect(listed.code, listed.stderr).toBe(0);
    const ids = (JSON.parse(listed.stdout) as { id: string }[]).map((o) => o.id);
    expect(ids).toHaveLength(1002);
    expect(new Set(ids).size).toBe(1002);
    // The newest order, which the 1,000 oldest left out.
    expect(ids).toContain(latest.id);
  });

  it("reports billing as a table and as JSON", async () => {
    const a = await order("P-1");
    await cli("orders", "advance", a.id, "Delivered");
    const table = await cli("billing", "--month", "2024-10");
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^billing 2024-10-01 to 2024-10-31 \(as of 2024-10-16 04:10Z\)/);
    expect(table.stdout).toMatch(/acme-dev\s+1\s+1\s+1\s+1/);
    const json = JSON.parse((await cli("billing", "--account", "acme-dev", "--json")).stdout);
    expect(json).toMatchObject({ device_days: 1, accounts: [{ client_domain: "acme-dev" }] });
    // A bad option is a usage error naming the option, not the API's query field.
    const badMonth = await cli("billing", "--month", "2024-13");
    expect(badMonth.code).toBe(2);
    expect(badMonth.stderr).toMatch(/^rpmlab: E_CONFIG_INVALID: --month: "2024-13" is not a month/);
    // A --from after this month, without --to: a usage error naming --from, the option given.
    const lateFrom = await cli("billing", "--from", "2030-01-05");
    expect(lateFrom.code, lateFrom.stderr).toBe(2);
    expect(lateFrom.stderr).toMatch(
      /^rpmlab: E_CONFIG_INVALID: --from: The first day \(2030-01-05\) comes after the last \(to: 2024-10-31, the last of this month by default\)/,
    );
    const listed = await cli("orders", "list", "--status", "Lost");
    expect(listed.code).toBe(2);
    expect(listed.stderr).toMatch(/^rpmlab: E_CONFIG_INVALID: --status: .*Lost/);
  });

  it("fails clearly: the API's 400 and 404, a wrong token, no token, no lab at the URL", async () => {
    const a = await order("P-1");
    const bad = await cli("orders", "advance", a.id, "Replaced");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(
      /^rpmlab: E_API_VALIDATION: .* 400 status: Replaced is not a carrier status/,
    );
    const missing = await cli("orders", "show", "nope");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("E_API_NOT_FOUND: GET");
    expect(missing.stderr).toContain('No order has id "nope".');
    const wrong = await runCli("orders", "list", "--url", url, "--admin-token", "x".repeat(20));
    expect(wrong.stderr).toContain("E_API_UNAUTHENTICATED");
    const none = await runCli("orders", "list", "--url", url);
    if (process.env.RPMLAB_ADMIN_TOKEN === undefined) {
      expect(none.code).toBe(2);
      expect(none.stderr).toContain("E_USAGE: this command acts through a running rpmlab serve");
    }
    await lab.app.close();
    const down = await cli("orders", "list");
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(
      /^rpmlab: E_LAB_UNREACHABLE: no rpmlab serve answers at http:\/\/127\.0\.0\.1:\d+/,
    );
  });
});
