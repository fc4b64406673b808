import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../catalogue/cli-io.ts";
import { catalogue, readingsOf, senderFor } from "../ingest/fixtures.ts";
import { HOUR, MINUTE, START, WebhookLab } from "./harness.ts";
import { Receiver } from "./receiver.ts";

const bpm = senderFor(catalogue.get("Vendor BPM - Wide Range"), 1);

/**
 * Issue 4 §1 "Inspection": the delivery log with attempts, resend and the status-metric choice,
 * through the lab admin API and `rpmlab webhooks`, on a SQLite file both share.
 */
describe("webhook delivery log, resend", () => {
  let dir: string;
  let spec: string;
  let lab: WebhookLab;
  let receiver: Receiver;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "rpmlab-webhooks-"));
    spec = `sqlite:${join(dir, "lab.db")}`;
    lab = await WebhookLab.open({ store: spec });
    receiver = await Receiver.start();
  });
  afterEach(async () => {
    await lab.close();
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A measurement delivery that gave up, and a patient delivery that was not retried. */
  async function failures() {
    const m = await lab.webhook({ endpoint: receiver.url("/m") });
    const p = await lab.webhook({ endpoint: receiver.url("/p"), event: "PATIENT" });
    receiver.behaviour = () => ({ status: 503, body: "down for maintenance" });
    await lab.device(bpm, "P-1");
    await lab.ingest(bpm, readingsOf(bpm, 5, 0).slice(0, 1));
    await lab.hwi("POST", "hwi-patients/", { external_id: "P-2" });
    await lab.runUntil(START + 25 * HOUR);
    receiver.behaviour = () => ({ status: 200, body: "thanks" });
    return { m, p };
  }

  it("the admin API lists deliveries with their last attempt, filters them, shows one with every attempt, and resends", async () => {
    const { m, p } = await failures();
    const all = (await lab.admin("GET", "accounts/clinic/webhook-deliveries/")).json();
    const measurements = all.filter((d: { event: string }) => d.event === "MEASUREMENT");
    expect(measurements.length).toBeGreaterThan(1);
    expect(measurements.every((d: { state: string }) => d.state === "failed")).toBe(true);
    expect(measurements[0].last_attempt).toMatchObject({
      status_code: 503,
      response_snippet: "down for maintenance",
      endpoint: m.endpoint,
      manual: false,
    });
    const patient = all.find((d: { event: string }) => d.event === "PATIENT");
    expect(patient).toMatchObject({ state: "not_retried", attempts: 1, patient_id: "P-2" });

    const q = (query: string) => lab.admin("GET", `accounts/clinic/webhook-deliveries/?${query}`);
    expect((await q(`webhook_id=${p.id}`)).json().map((d: { id: string }) => d.id)).toEqual([
      patient.id,
    ]);
    expect((await q("state=not_retried")).json()).toHaveLength(1);
    // In any case, as event is.
    expect((await q("state=Not_Retried")).json()).toHaveLength(1);
    expect((await q("state=FAILED")).json()).toHaveLength(measurements.length);
    expect((await q("event=measurement")).json()).toHaveLength(measurements.length);
    expect((await q("patient_id=P-1")).json()).toHaveLength(measurements.length);
    const page = (await q("page=1&page_size=2")).json();
    expect(page).toMatchObject({ count: all.length, previous: null });
    expect(page.results).toHaveLength(2);
    const bad = await q("state=LOST");
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({
      state: ['"LOST" is not a valid choice (pending, delivered, failed, not_retried).'],
    });
    // Every wrong filter at once, not the first alone.
    const allBad = await q("state=lost&event=reading&webhook_id=w-1&hwi_device_id=d-1");
    expect(allBad.statusCode).toBe(400);
    expect(Object.keys(allBad.json())).toEqual(["state", "event", "webhook_id", "hwi_device_id"]);
    // An id that is no UUID is refused, not answered with an empty list.
    for (const field of ["webhook_id", "hwi_device_id"]) {
      const notUuid = await q(`${field}=not-a-uuid`);
      expect(notUuid.statusCode).toBe(400);
      expect(notUuid.json()).toEqual({ [field]: ["Enter a valid UUID."] });
    }

    const detail = (
      await lab.admin("GET", `accounts/clinic/webhook-deliveries/${measurements[0].id}/`)
    ).json();
    expect(detail.body).toMatchObject({
      patient_id: "P-1",
      hwi_device_id: measurements[0].hwi_device_id,
    });
    expect(detail.attempt_log.length).toBe(detail.attempts);
    expect(detail.attempt_log.map((a: { number: number }) => a.number)).toEqual(
      detail.attempt_log.map((_: unknown, i: number) => i + 1),
    );

    // Resend: one attempt now, same delivery id and body; delivered.
    const before = receiver.received.length;
    const resent = await lab.admin(
      "POST",
      `accounts/clinic/webhook-deliveries/${measurements[0].id}/resend/`,
    );
    expect(resent.statusCode).toBe(200);
    expect(resent.json()).toMatchObject({ state: "delivered", attempts: detail.attempts + 1 });
    expect(resent.json().attempt_log.at(-1)).toMatchObject({
      status_code: 200,
      manual: true,
      response_snippet: "thanks",
    });
    const posted = receiver.received.slice(before);
    expect(posted).toHaveLength(1);
    expect(posted[0]!.headers["x-rpmlab-delivery"]).toBe(measurements[0].id);
    expect(posted[0]!.body).toBe(JSON.stringify(detail.body));
    // Not found, wrong account, no token.
    expect(
      (await lab.admin("POST", "accounts/clinic/webhook-deliveries/nope/resend/")).statusCode,
    ).toBe(404);
    expect((await lab.admin("GET", "accounts/nobody/webhook-deliveries/")).statusCode).toBe(404);
    const noHook = await lab.admin("POST", "accounts/clinic/webhooks/nope/test/");
    expect(noHook.statusCode).toBe(404);
    expect(noHook.json().detail).toBe('no webhook "nope"');
    const { app } = await lab.api();
    expect(
      (await app.inject({ method: "GET", url: "/lab/v1/accounts/clinic/webhook-deliveries/" }))
        .statusCode,
    ).toBe(401);
  });

  it("rpmlab webhooks lists, shows and resends from the store; exit code 1 when the endpoint refuses, 2 for an unknown state", async () => {
    await failures();
    const cli = (...args: string[]) => runCli("webhooks", ...args, "--store", spec);
    const table = await cli("deliveries", "clinic", "--state", "FAILED");
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trim().split("\n");
    expect(lines[0]).toMatch(
      /^CREATED\s+EVENT\s+STATE\s+ATTEMPTS\s+LAST ATTEMPT\s+DELIVERY\s+WEBHOOK/,
    );
    expect(lines.slice(1).every((l) => /MEASUREMENT\s+failed\s+\d+\s+503 in/.test(l))).toBe(true);
    const listed = JSON.parse((await cli("deliveries", "clinic", "--json", "--limit", "1")).stdout);
    expect(listed).toHaveLength(1);
    const id: string = JSON.parse(
      (await cli("deliveries", "clinic", "--json", "--event", "PATIENT")).stdout,
    )[0].id;

    const shown = await cli("delivery", "clinic", id);
    expect(shown.stdout).toMatch(/^delivery [0-9a-f-]{36}: PATIENT, not_retried after 1 attempt/);
    expect(shown.stdout).toContain("503 in");
    expect(shown.stdout).toContain('"action": "created"');

    const resent = await cli("resend", "clinic", id, "--json");
    expect(resent.code, resent.stderr).toBe(0);
    expect(JSON.parse(resent.stdout)).toMatchObject({ state: "delivered", attempts: 2 });
    expect(receiver.received.at(-1)!.headers["x-rpmlab-delivery"]).toBe(id);

    receiver.behaviour = () => ({ status: 410, body: "gone" });
    const refused = await cli("resend", "clinic", id);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^rpmlab: E_WEBHOOK_NOT_DELIVERED: .*410/);
    // Delivered once stays delivered; the refused resend is in the log.
    expect(JSON.parse((await cli("delivery", "clinic", id, "--json")).stdout)).toMatchObject({
      state: "delivered",
      attempts: 3,
    });
    const bad = await cli("deliveries", "clinic", "--state", "lost");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('E_USAGE: --state: "lost" is not a valid choice');
    const notUuid = await cli("deliveries", "clinic", "--webhook", "not-a-uuid");
    expect(notUuid.code).toBe(2);
    expect(notUuid.stderr).toContain("E_USAGE: --webhook: Enter a valid UUID.");
    const both = await cli("deliveries", "clinic", "--state", "lost", "--device", "d-1");
    expect(both.code).toBe(2);
    expect(both.stderr).toBe(
      'rpmlab: E_USAGE: --state: "lost" is not a valid choice (pending, delivered, failed, not_retried). --device: Enter a valid UUID.',
    );
    // The id as given, quoted: an empty one read "no webhook delivery " with nothing after it.
    for (const command of ["delivery", "resend"]) {
      const none = await cli(command, "clinic", "");
      expect(none.code).toBe(1);
      expect(none.stderr).toContain('E_STORE_NOT_FOUND: no webhook delivery ""');
    }
    const noHook = await cli("test", "clinic", "");
    expect(noHook.code).toBe(1);
    expect(noHook.stderr).toContain('E_STORE_NOT_FOUND: no webhook ""');
  });

  it("rpmlab webhooks deliveries reaches every page with --page, and says when a list is cut", async () => {
    await failures();
    const all = (await lab.admin("GET", "accounts/clinic/webhook-deliveries/")).json() as {
      id: string;
    }[];
    expect(all.length).toBeGreaterThan(2);
    const cli = (...args: string[]) =>
      runCli("webhooks", "deliveries", "clinic", "--store", spec, ...args);
    const ids = (stdout: string) => (JSON.parse(stdout) as { id: string }[]).map((d) => d.id);
    // Page by page, newest first, the whole log as the admin API lists it.
    const pages = Math.ceil(all.length / 2);
    const seen: string[] = [];
    for (let page = 1; page <= pages; page++) {
      const listed = await cli("--limit", "2", "--page", String(page), "--json");
      expect(listed.code, listed.stderr).toBe(0);
      seen.push(...ids(listed.stdout));
    }
    expect(seen).toEqual(all.map((d) => d.id));
    // A cut list says so on stderr (stdout stays the table), and how to see the next page.
    const first = await cli("--limit", "2");
    expect(first.stdout.trim().split("\n")).toHaveLength(3);
    expect(first.stderr).toContain(`deliveries 1–2 of ${all.length}, newest first: --page 2`);
    const whole = await cli();
    expect(whole.stderr).toBe("");
    const past = await cli("--limit", "2", "--page", String(pages + 1));
    expect(past.code).toBe(2);
    expect(past.stderr).toContain(`E_USAGE: --page ${pages + 1} is past the last page`);
    // Far past it too, where page × limit is beyond the integers a store takes.
    const far = await cli("--limit", "1000", "--page", "999999999999999");
    expect(far.code, far.stderr).toBe(2);
    expect(far.stderr).toContain("E_USAGE: --page 999999999999999 is past the last page");
    const bad = await cli("--page", "0");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      '--page must be a whole number from 1 to 9007199254740991, got "0"',
    );
  });

  it("rpmlab webhooks test sends a sample to a webhook", async () => {
    const w = await lab.webhook({ endpoint: receiver.url("/m") });
    const sent = await runCli("webhooks", "test", "clinic", w.id, "--store", spec);
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toMatch(/MEASUREMENT \(test\), delivered after 1 attempt/);
    expect(receiver.received).toHaveLength(1);
  });

  it("rpmlab webhooks shows an endpoint's answer with its control characters escaped, DEL and C1 too", async () => {
    const w = await lab.webhook({ endpoint: receiver.url("/m") });
    // ESC [ and its one-character C1 form CSI (U+009B), DEL, NEL: terminals act on each.
    receiver.behaviour = () => ({ status: 503, body: "no\u001b[31m\u009b2J\u007f\u0085end" });
    const sent = await runCli("webhooks", "test", "clinic", w.id, "--store", spec);
    expect(sent.code).toBe(1);
    expect(sent.stdout).toContain("503 in");
    expect(sent.stdout).toContain('"no\\u001b[31m\\u009b2J\\u007f\\u0085end"');
    expect(/\p{Cc}/u.test(sent.stdout.replaceAll("\n", ""))).toBe(false);
  });

  it("logs an answer cut at 512 characters whole: a character across the cut is left out, not mangled", async () => {
    const w = await lab.webhook({ endpoint: receiver.url("/m") });
    // An emoji is two UTF-16 units: the 512th and 513th here.
    receiver.behaviour = () => ({ status: 500, body: `${"x".repeat(511)}😀 and more` });
    const sent = await lab.admin("POST", `accounts/clinic/webhooks/${w.id}/test/`);
    expect(sent.json().last_attempt.response_snippet).toBe(`${"x".repeat(511)}…`);
    // Before the cut, the same character is kept.
    receiver.behaviour = () => ({ status: 500, body: `${"x".repeat(510)}😀 and more` });
    const kept = await lab.admin("POST", `accounts/clinic/webhooks/${w.id}/test/`);
    expect(kept.json().last_attempt.response_snippet).toBe(`${"x".repeat(510)}😀…`);
  });

  it("rpmlab webhooks shows a resend of a deleted webhook's delivery as no request, without a latency", async () => {
    const w = await lab.webhook({ endpoint: receiver.url("/m") });
    const cli = (...args: string[]) => runCli("webhooks", ...args, "--store", spec);
    const id: string = JSON.parse((await cli("test", "clinic", w.id, "--json")).stdout).id;
    expect((await lab.hwi("DELETE", `webhooks/${w.id}/`)).statusCode).toBe(204);
    const resent = await cli("resend", "clinic", id);
    expect(resent.code).toBe(1);
    expect(resent.stderr).toMatch(
      /^rpmlab: E_WEBHOOK_NOT_DELIVERED: delivery \S+ was not sent: the webhook was deleted/,
    );
    expect(resent.stdout).toMatch(
      /\n {2}#2 \S+ \(resend\) → no request: the webhook was deleted\n/,
    );
    const table = await cli("deliveries", "clinic");
    expect(table.stdout).toMatch(/delivered \(test\)\s+2\s+no request: the webhook was deleted\s/);
  });

  it("a kind the log does not know is refused as the user wrote it, by the admin API and rpmlab webhooks", async () => {
    const bad = await lab.admin("GET", "accounts/clinic/webhook-deliveries/?event=measurment");
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({
      event: [
        '"measurment" is not a valid choice (MEASUREMENT, FULFILLMENT, SPECIAL_ORDER, PATIENT).',
      ],
    });
    const usage = await runCli("webhooks", "deliveries", "clinic", "--event", "patients");
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('E_USAGE: --event: "patients" is not a valid choice');
  });

  it("a test send to an endpoint slower than a minute of the lab's clock is posted once, by the send alone", async () => {
    // A sender timeout of a wall minute: the virtual run below takes seconds of wall time on a
    // loaded machine, longer than the harness's 2 s.
    await lab.close();
    lab = await WebhookLab.open({
      store: `sqlite:${join(dir, "slow.db")}`,
      config: { timeoutMs: MINUTE },
    });
    const w = await lab.webhook({ endpoint: receiver.url("/slow") });
    receiver.behaviour = () => ({ hold: true });
    const sent = lab.admin("POST", `accounts/clinic/webhooks/${w.id}/test/`);
    await receiver.count(1);
    // The endpoint takes its time; the lab's clock runs on (a demo's minute is a wall second),
    // past when a claim on the delivery would lapse (2 × timeout + 1 s).
    await lab.runUntil(START + HOUR);
    receiver.release();
    const answer = await sent;
    expect(answer.statusCode).toBe(201);
    expect(answer.json()).toMatchObject({ state: "delivered", attempts: 1 });
    await lab.runUntil(START + 2 * HOUR);
    expect(receiver.received).toHaveLength(1);
    const logged = (
      await lab.admin("GET", `accounts/clinic/webhook-deliveries/?webhook_id=${w.id}`)
    ).json();
    expect(logged).toMatchObject([{ test: true, state: "delivered", attempts: 1 }]);
  });

  it("the admin API and rpmlab accounts set the status-metric choice", async () => {
    const patched = await lab.admin("PATCH", "accounts/clinic/", { omit_status_metrics: true });
    expect(patched.json()).toMatchObject({ omit_status_metrics: true, asr_enabled: false });
    const back = await runCli(
      "accounts",
      "status-metrics",
      "clinic",
      "send",
      "--json",
      "--store",
      spec,
    );
    expect(JSON.parse(back.stdout)).toMatchObject({ omit_status_metrics: false });
    const usage = await runCli("accounts", "status-metrics", "clinic", "maybe", "--store", spec);
    expect(usage.code).toBe(2);
  });
});
