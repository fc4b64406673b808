import { execFile } from "node:child_process";
import { createHmac, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TEST_DEVICE_ID } from "../../src/webhooks/payloads/samples.ts";
import { verifySignature } from "../../src/webhooks/signature.ts";
import { catalogue, readingsOf, senderFor } from "../ingest/fixtures.ts";
import { expectConsumable, WebhookLab } from "./harness.ts";
import { Receiver } from "./receiver.ts";

const bpm = senderFor(catalogue.get("Vendor BPM - Wide Range"), 1);
const readme = () =>
  readFileSync(fileURLToPath(new URL("../../README.md", import.meta.url)), "utf8");

/** The POST itself: static auth header, rpmlab's delivery headers, the opt-in signature. */
describe("webhook requests", () => {
  let lab: WebhookLab;
  let receiver: Receiver;
  beforeEach(async () => {
    lab = await WebhookLab.open();
    receiver = await Receiver.start();
  });
  afterEach(async () => {
    await lab.close();
    await receiver.close();
  });

  it("carries auth_header: auth_key, the delivery id, the event and the attempt number on every POST", async () => {
    await lab.webhook({
      endpoint: receiver.url("/hook?token=q"),
      authHeader: "Authorization",
      authKey: "Bearer s3cret",
    });
    await lab.webhook({ endpoint: receiver.url("/plain") });
    await lab.device(bpm, "P-1");
    const stored = await lab.ingest(bpm, readingsOf(bpm, 5, 0).slice(0, 1));
    await lab.settle();
    const withAuth = receiver.received.filter((r) => r.path === "/hook?token=q");
    expect(withAuth).toHaveLength(stored);
    for (const r of withAuth) {
      expect(r.headers.authorization).toBe("Bearer s3cret");
      expect(r.headers["content-type"]).toBe("application/json");
      expect(r.headers["x-rpmlab-event"]).toBe("MEASUREMENT");
      expect(r.headers["x-rpmlab-attempt"]).toBe("1");
      expect(r.headers["x-rpmlab-delivery"]).toMatch(/^[0-9a-f-]{36}$/);
      expect(r.headers["x-rpmlab-signature"]).toBeUndefined();
    }
    const plain = receiver.received.filter((r) => r.path === "/plain");
    expect(plain.every((r) => r.headers.authorization === undefined)).toBe(true);
    const ids = receiver.received.map((r) => r.headers["x-rpmlab-delivery"]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("signs with the webhook's secret: the README's check accepts it, a wrong secret or an old timestamp does not", async () => {
    const secret = "whsec_for-this-test-0123456789";
    await lab.webhook({ endpoint: receiver.url("/signed"), signingSecret: secret });
    await lab.device(bpm, "P-1");
    await lab.ingest(bpm, readingsOf(bpm, 5, 0).slice(0, 1));
    await lab.settle();
    expect(receiver.received.length).toBeGreaterThan(0);
    const now = lab.clock.now();
    for (const r of receiver.received) {
      const header = r.headers["x-rpmlab-signature"] as string;
      expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(header.startsWith(`t=${Math.floor(now / 1000)},`)).toBe(true);
      expect(verifySignature(header, r.body, secret, now)).toBe(true);
      expect(verifySignature(header, r.body, "whsec_another-secret-0123456789", now)).toBe(false);
      expect(verifySignature(header, `${r.body} `, secret, now)).toBe(false);
      // A replay more than five minutes later is refused.
      expect(verifySignature(header, r.body, secret, now + 301_000)).toBe(false);
      expect(verifySignature(undefined, r.body, secret, now)).toBe(false);
      for (const junk of ["zz", "0", "0g", "!", "=00"]) {
        expect(verifySignature(`${header}${junk}`, r.body, secret, now), junk).toBe(false);
      }
    }
  });

  it("the README's verification snippet accepts rpmlab's signature and refuses a forgery or a replay", async () => {
    const code = /### Signatures[\s\S]*?```js\n([\s\S]*?)```/.exec(readme())?.[1];
    expect(code).toBeDefined();
    // The snippet as a user pastes it, its import given as arguments.
    const verify = new Function(
      "createHmac",
      "timingSafeEqual",
      `${code!.replace(/^import .*$/m, "")}\nreturn verifyRpmlabSignature;`,
    )(createHmac, timingSafeEqual) as (
      header: string | undefined,
      body: string,
      secret: string,
      nowMs: number,
    ) => boolean;
    const secret = "whsec_readme-0123456789abcdefghij";
    await lab.webhook({ endpoint: receiver.url("/signed"), signingSecret: secret });
    await lab.device(bpm, "P-1");
    await lab.ingest(bpm, readingsOf(bpm, 5, 0).slice(0, 1));
    await lab.settle();
    const now = lab.clock.now();
    for (const r of receiver.received) {
      const header = r.headers["x-rpmlab-signature"] as string;
      expect(verify(header, r.body, secret, now)).toBe(true);
      expect(verify(header, r.body.replace("P-1", "P-2"), secret, now)).toBe(false);
      expect(verify(header, r.body, secret, now + 6 * 60_000)).toBe(false);
      // Junk after a valid signature: Buffer.from(…, "hex") stops at the first non-hex
      // character, so a check that decodes before comparing would accept these.
      for (const junk of ["zz", "0", "0g", "!", "=00"]) {
        expect(verify(`${header}${junk}`, r.body, secret, now), junk).toBe(false);
      }
      // Unsigned, as node:http hands over a request without the header: refused, not a
      // TypeError that would end a plain node:http receiver.
      expect(verify(undefined, r.body, secret, now)).toBe(false);
    }
  });

  it("the README's Python check accepts rpmlab's signature on the raw bytes and refuses a forgery, a replay or an unsigned request", async () => {
    const code = /### Signatures[\s\S]*?```python\n([\s\S]*?)```/.exec(readme())?.[1];
    expect(code).toBeDefined();
    const secret = "whsec_python-0123456789abcdefghij";
    await lab.webhook({ endpoint: receiver.url("/m"), signingSecret: secret });
    await lab.webhook({ endpoint: receiver.url("/p"), event: "PATIENT", signingSecret: secret });
    await lab.device(bpm, "P-1");
    await lab.ingest(bpm, readingsOf(bpm, 5, 0).slice(0, 1));
    // A body beyond ASCII: the signature is over its UTF-8 bytes.
    const created = await lab.hwi("POST", "hwi-patients/", { external_id: "P-É", name: "Zoë Ω" });
    expect(created.statusCode, created.body).toBe(201);
    await lab.settle();
    expect(receiver.received.some((r) => r.body.includes("Zoë Ω"))).toBe(true);
    const nowS = lab.clock.now() / 1000;
    const cases = receiver.received.flatMap((r) => {
      const header = r.headers["x-rpmlab-signature"] as string;
      const body = Buffer.from(r.body, "utf8").toString("base64");
      const forged = Buffer.from(r.body.replace("P-", "Q-"), "utf8").toString("base64");
      return [
        { header, body, now: nowS, want: true },
        { header, body: forged, now: nowS, want: false },
        { header, body, now: nowS + 301, want: false },
        { header: header.replace(/v1=./, "v1=é"), body, now: nowS, want: false },
        { header: null, body, now: nowS, want: false },
      ];
    });
    // The snippet as a user pastes it, run by python3 over each request's raw bytes.
    const driver = `${code}
import base64, json, sys
print(json.dumps([verify_rpmlab_signature(c["header"], base64.b64decode(c["body"]), ${JSON.stringify(secret)}, c["now"]) for c in json.load(sys.stdin)]))
`;
    const got = await new Promise<string>((resolve, reject) => {
      const python = execFile("python3", ["-c", driver], (error, stdout, stderr) =>
        error === null ? resolve(stdout) : reject(new Error(`${error.message}\n${stderr}`)),
      );
      python.stdin!.end(JSON.stringify(cases));
    });
    expect(JSON.parse(got)).toEqual(cases.map((c) => c.want));
  });

  it("a test send posts a sample of the webhook's kind about the fixed test device, logged as a test", async () => {
    const measurement = await lab.webhook({ endpoint: receiver.url("/m"), postAsArray: true });
    const fulfilment = await lab.webhook({ endpoint: receiver.url("/f"), event: "FULFILLMENT" });
    const patient = await lab.webhook({ endpoint: receiver.url("/p"), event: "PATIENT" });
    const orders = await lab.webhook({ endpoint: receiver.url("/o"), event: "SPECIAL_ORDER" });
    for (const w of [measurement, fulfilment, patient, orders]) {
      const res = await lab.admin("POST", `accounts/clinic/webhooks/${w.id}/test/`);
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json()).toMatchObject({
        webhook_id: w.id,
        event: w.event,
        state: "delivered",
        test: true,
        attempts: 1,
      });
      expect(res.json().attempt_log).toEqual([expect.objectContaining({ status_code: 200 })]);
    }
    // Found by the log's filters, as a real delivery of its kind is (a patient's names no device).
    const filtered = async (query: string) =>
      (
        (await lab.admin("GET", `accounts/clinic/webhook-deliveries/?${query}`)).json() as {
          event: string;
        }[]
      )
        .map((d) => d.event)
        .sort();
    expect(await filtered(`hwi_device_id=${TEST_DEVICE_ID}`)).toEqual([
      "FULFILLMENT",
      "MEASUREMENT",
      "SPECIAL_ORDER",
    ]);
    expect(await filtered("patient_id=TEST-PATIENT")).toEqual([
      "FULFILLMENT",
      "MEASUREMENT",
      "PATIENT",
      "SPECIAL_ORDER",
    ]);
    const paths = ["/m", "/f", "/p", "/o"];
    for (const [i, w] of [measurement, fulfilment, patient, orders].entries()) {
      expectConsumable(
        receiver.received.filter((r) => r.path === paths[i]),
        w,
      );
    }
    const sample = receiver.received.find((r) => r.path === "/m")!.json as {
      hwi_device_id: string;
    }[];
    expect(sample.every((r) => r.hwi_device_id === TEST_DEVICE_ID)).toBe(true);
    expect(
      (receiver.received.find((r) => r.path === "/f")!.json as { hwi_device_id: string })
        .hwi_device_id,
    ).toBe(TEST_DEVICE_ID);

    // A failing endpoint: still 201 with the attempt, not_retried.
    receiver.behaviour = () => ({ status: 500, body: "boom" });
    const failed = (await lab.admin("POST", `accounts/clinic/webhooks/${patient.id}/test/`)).json();
    expect(failed).toMatchObject({ state: "not_retried", test: true });
    expect(failed.attempt_log[0]).toMatchObject({ status_code: 500, response_snippet: "boom" });
    await lab.runUntil(lab.clock.now() + 3_600_000);
    expect(receiver.seen.filter((r) => r.path === "/p")).toHaveLength(2);
    expect(
      (
        await lab.admin(
          "POST",
          "accounts/clinic/webhooks/00000000-0000-4000-8000-000000000000/test/",
        )
      ).statusCode,
    ).toBe(404);
  });
});
