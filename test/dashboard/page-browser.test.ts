/**
 * The dashboard page in a real browser (Debian's Chromium, driven by playwright-core) against
 * `rpmlab serve`'s composition: what a demo audience sees. The page asks for a token it was not
 * given and refuses a wrong one; with the right one it shows the account's totals, then a
 * gateway's check-in and a reading with its values as they happen — all under the page's own
 * Content-Security-Policy, with no script error.
 */
import { readFileSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type mqtt from "mqtt";
import { type Browser, chromium, type Page, type Route } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { VirtualClock } from "../../src/core/virtual-clock.ts";
import { topicOf } from "../../src/mqtt/topics.ts";
import { ServeLab } from "../gateway/serve-lab.ts";
import {
  checkinPayload,
  RECEIVED,
  readingsOf,
  senderFor,
  uplinkMessage,
} from "../ingest/fixtures.ts";
import { CHROMIUM, systemToolOrSkip } from "../support/system-tool.ts";

const SUITE = "dashboard page in Chromium";
const DASHBOARD_PAGE = readFileSync(new URL("../../src/dashboard/page.html", import.meta.url));
const TICK = "2026-03-02T00:00:00.000000Z";
const frame = (event: string, data: object) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
const executablePath = systemToolOrSkip(SUITE, CHROMIUM);
const catalogue = Catalogue.load();
const bpm = senderFor(catalogue.get("Vendor BPM - Wide Range"), 2);

describe.runIf(executablePath !== undefined)(SUITE, () => {
  let browser: Browser;
  let serve: ServeLab | undefined;
  let client: mqtt.MqttClient | undefined;
  let page: Page;
  /** Script errors and console errors (a CSP violation is one) the page produced. */
  const errors: string[] = [];

  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: executablePath!,
      // Root in a container has no user namespace for Chromium's sandbox.
      args: ["--no-sandbox"],
    });
  }, 30_000);
  afterAll(() => browser?.close());

  afterEach(async () => {
    await page?.close();
    await client?.endAsync();
    await serve?.stop();
    errors.length = 0;
  }, 30_000);

  async function openPage(url: string) {
    page = await browser.newPage();
    page.on("pageerror", (error) => errors.push(String(error)));
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    await page.goto(url);
  }

  /**
   * A lab of the page's own: its feed sends `frames` after the clock tick and then nothing,
   * never closing. `feeds` are the feeds the page opened.
   */
  async function fakeLab(frames: readonly string[] = []) {
    const feeds: ServerResponse[] = [];
    const server = createServer((request, response) => {
      if (request.url === "/dashboard/") {
        response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        return response.end(DASHBOARD_PAGE);
      }
      if (request.url === "/lab/v1/overview/") {
        response.writeHead(200, { "content-type": "application/json" });
        return response.end(JSON.stringify({ now: TICK, accounts: [], dead_letters: 0 }));
      }
      if (request.url !== "/lab/v1/events/") {
        response.writeHead(404);
        return response.end();
      }
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write([frame("clock", { now: TICK }), ...frames].join(""));
      feeds.push(response);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    stopFakeLab = async () => {
      for (const feed of feeds) feed.destroy();
      await new Promise((resolve) => server.close(resolve));
    };
    page = await browser.newPage();
    page.on("pageerror", (error) => errors.push(String(error)));
    return { feeds, url: `http://127.0.0.1:${port}/dashboard/#token=admin` };
  }
  let stopFakeLab: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await stopFakeLab?.();
    stopFakeLab = undefined;
  });

  it("reconnects when the feed goes silent without closing (a network that dropped it)", async () => {
    // What the page sees when a proxy or a Wi-Fi change loses the connection without a word.
    const lab = await fakeLab();
    // The page's timers run on a clock the test moves: a minute of silence takes no time.
    await page.clock.install();
    await page.goto(lab.url);
    await page.waitForSelector("#state:has-text('live')");
    await page.clock.runFor(60_000);
    await expect.poll(() => lab.feeds.length).toBe(2);
    await page.waitForSelector("#state:has-text('live')");
    expect(errors).toEqual([]);
  }, 30_000);

  it("shows a reading's values with their units, and names a value 2 that is no diastolic", async () => {
    const reading = {
      id: 1,
      account_id: null,
      hwi_device_id: null,
      device_name: "Vendor Cellular Pulse Ox",
      patient_id: "P-OX",
      hardware_uuid: "350000000000001",
      timestamp: TICK,
    };
    const lab = await fakeLab([
      frame("reading", {
        ...reading,
        metric: "spO2",
        value_1: 97,
        value_2: 1.35,
        value_1_units: "%",
        value_2_units: "%",
        value_2_meaning: "standard deviation",
      }),
      frame("reading", {
        ...reading,
        metric: "weight",
        value_1: 198.4,
        value_2: null,
        value_1_units: "pounds",
        value_2_units: null,
        value_2_meaning: null,
      }),
    ]);
    await page.goto(lab.url);
    const value = (metric: string) =>
      page.locator("#readings tr", { hasText: metric }).locator("td").last().innerText();
    await expect.poll(() => value("spO2")).toBe("97 % (standard deviation 1.35 %)");
    expect(await value("weight")).toBe("198.4 pounds");
    // On a projector's 1280 pixels, no column heading, no time and no weight is cut short
    // ("198.4 p…"); a long device name may be.
    await page.setViewportSize({ width: 1280, height: 720 });
    const cutShort = (selector: string) =>
      page.$$eval(selector, (cells) =>
        cells.filter((c) => c.scrollWidth > c.clientWidth).map((c) => c.textContent),
      );
    expect(await cutShort("th")).toEqual([]);
    expect(
      await cutShort("#readings tr:has-text('weight') td:is(:first-child, :last-child)"),
    ).toEqual([]);
    expect(errors).toEqual([]);
  }, 30_000);

  it("fits a phone's width: every card and table on screen, no sideways scrolling", async () => {
    const lab = await fakeLab();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(lab.url);
    await page.waitForSelector("#state:has-text('live')");
    const overflow = await page.evaluate(
      "document.documentElement.scrollWidth - document.documentElement.clientWidth",
    );
    expect(overflow).toBe(0);
  }, 30_000);

  it("asks for the token, refuses a wrong one, then connects with the right one", async () => {
    serve = await ServeLab.start(new VirtualClock({ startMs: RECEIVED }));
    await openPage(`${serve.info.base_url}/dashboard/`);
    await expect.poll(() => page.isVisible("#login")).toBe(true);
    await page.fill("#token", "not-the-token");
    await page.click("#login button");
    await page.waitForSelector("#login-error:has-text('The lab refused that token.')");
    await page.fill("#token", serve.info.admin_token);
    await page.click("#login button");
    await page.waitForSelector("#state:has-text('live')");
    expect(await page.isVisible("#login")).toBe(false);
    // The refused token's 401s are the only errors the console saw.
    expect(errors.filter((e) => !e.includes("401"))).toEqual([]);
  }, 30_000);

  it("says so when a token was pasted with quotes a request cannot carry, and asks again", async () => {
    serve = await ServeLab.start(new VirtualClock({ startMs: RECEIVED }));
    await openPage(`${serve.info.base_url}/dashboard/`);
    await page.waitForSelector("#login");
    // Copied from a chat or a document, typographic quotes and all.
    await page.fill("#token", `“${serve.info.admin_token}”`);
    await page.click("#login button");
    await page.waitForSelector("#login-error:has-text('not a token')", { timeout: 10_000 });
    expect(await page.isVisible("#login")).toBe(true);
    expect(await page.innerText("#state")).toBe("not connected");
    await page.fill("#token", serve.info.admin_token);
    await page.click("#login button");
    await page.waitForSelector("#state:has-text('live')");
    expect(errors).toEqual([]);
  }, 30_000);

  it("takes a token pasted into the address bar of a tab already open, and hides it again", async () => {
    serve = await ServeLab.start(new VirtualClock({ startMs: RECEIVED }));
    await openPage(`${serve.info.base_url}/dashboard/#token=an-old-labs-token`);
    await page.waitForSelector("#login-error:has-text('The lab refused that token.')");
    // The same page, another fragment: no reload, only a hashchange.
    await page.goto(serve.info.dashboard_url);
    await page.waitForSelector("#state:has-text('live')");
    expect(await page.isVisible("#login")).toBe(false);
    expect(page.url()).toBe(`${serve.info.base_url}/dashboard/`);
    expect(errors.filter((e) => !e.includes("401"))).toEqual([]);
  }, 30_000);

  it("starts over when the lab behind the page is another one: its time, no old rows", async () => {
    const first = new VirtualClock({ startMs: RECEIVED + 2 * 86_400_000 });
    serve = await ServeLab.start(first);
    const { port } = new URL(serve.info.base_url);
    await openPage(serve.info.dashboard_url);
    await page.waitForSelector("#state:has-text('live')");
    client = await serve.gatewayClient(bpm.hardwareUuid);
    await client.publishAsync(
      topicOf("gw/status", bpm.hardwareUuid),
      checkinPayload(20, first.now()),
      { qos: 1 },
    );
    await page.waitForSelector(`#gateways tr:has-text('${bpm.hardwareUuid}')`);
    const later = new Date(first.now()).toISOString().slice(0, 10);
    expect(await page.innerText("#clock")).toContain(later);
    await client.endAsync();
    client = undefined;
    await serve.stop();
    // A new lab on the same address and token, two days earlier (a demo started again).
    serve = await ServeLab.start(
      new VirtualClock({ startMs: RECEIVED }),
      "embedded:0",
      Number(port),
    );
    const earlier = new Date(RECEIVED).toISOString().slice(0, 10);
    await expect.poll(() => page.innerText("#clock"), { timeout: 15_000 }).toContain(earlier);
    await page.waitForSelector("#state:has-text('live')");
    expect(await page.locator("#gateways tr").count()).toBe(0);
  }, 45_000);

  it("follows one lab at a time: a URL pasted while the first start still loads opens one feed, and each reading shows once", async () => {
    const clock = new VirtualClock({ startMs: RECEIVED });
    serve = await ServeLab.start(clock);
    const { info } = serve;
    page = await browser.newPage();
    page.on("pageerror", (error) => errors.push(String(error)));
    // Counts the feeds the page opens (an init script runs whatever the page's policy).
    await page.addInitScript({
      content: `window.feeds = 0;
        const original = window.fetch.bind(window);
        window.fetch = (input, init) => {
          if (String(input).includes("/lab/v1/events/")) window.feeds++;
          return original(input, init);
        };`,
    });
    // The first two asks for the totals answer only when let through: the first start waits.
    const held: Route[] = [];
    await page.route("**/lab/v1/overview/", (route) =>
      held.length < 2 ? void held.push(route) : route.continue(),
    );
    await page.goto(info.dashboard_url);
    await expect.poll(() => held.length).toBe(1);
    // The URL pasted again meanwhile (a hashchange): a second start.
    await page.goto(info.dashboard_url);
    await expect.poll(() => held.length).toBe(2);
    const [first, second] = held as [Route, Route];
    await first.continue();
    await (await first.request().response())?.finished();
    // The second start's totals, told apart: once shown, that start has asked for its feed.
    const answer = await second.fetch();
    const totals = await answer.json();
    totals.accounts[0].client_domain = "second-start";
    await second.fulfill({ response: answer, json: totals });
    await page.waitForSelector("#accounts h2:has-text('second-start')");
    await page.waitForSelector("#state:has-text('live')");
    expect(await page.evaluate("window.feeds")).toBe(1);

    client = await serve.gatewayClient(bpm.hardwareUuid);
    const device = await serve.hwi("POST", "hwi-devices/", {
      device: { name: bpm.profile.name, hardware_uuid: bpm.hardwareUuid },
      patient: { external_id: "P-ONCE" },
    });
    expect(device.status).toBe(201);
    const [taken] = readingsOf(bpm, 2, 0);
    const message = uplinkMessage(bpm, "once-1", [taken!]);
    await client.publishAsync(message.topic, message.payload, { qos: 1 });
    await expect
      .poll(() => page.innerText("#batches"))
      .toBe(`${taken!.records.length} records in 1 batch since connected`);
    expect(await page.locator("#readings tr").count()).toBe(taken!.records.length);
    expect(errors).toEqual([]);
  }, 45_000);

  it("shows the totals, then each check-in and reading as it happens", async () => {
    const clock = new VirtualClock({ startMs: RECEIVED });
    serve = await ServeLab.start(clock);
    const { info } = serve;
    await openPage(info.dashboard_url);
    await page.waitForSelector("#state:has-text('live')");
    // The token left the address bar once read.
    expect(page.url()).toBe(`${info.base_url}/dashboard/`);
    await page.waitForSelector(`#accounts h2:has-text('${info.client_domain} (development)')`);
    // The lab's time says its zone: every time on the page is UTC, not the audience's own.
    const now = new Date(clock.now()).toISOString().replace("T", " ").slice(0, 19);
    expect(await page.innerText("header")).toContain(`lab time ${now} UTC`);

    client = await serve.gatewayClient(bpm.hardwareUuid);
    await client.publishAsync(
      topicOf("gw/status", bpm.hardwareUuid),
      checkinPayload(7, clock.now()),
      { qos: 1 },
    );
    const gatewayRow = page.locator("#gateways tr", { hasText: bpm.hardwareUuid });
    await expect.poll(() => gatewayRow.innerText()).toMatch(/online\s+7\/30/);
    // A weak signal is marked.
    expect(await gatewayRow.locator("td.warn").innerText()).toBe("7/30");

    const device = await serve.hwi<{ id: string }>("POST", "hwi-devices/", {
      device: { name: bpm.profile.name, hardware_uuid: bpm.hardwareUuid },
      patient: { external_id: "P-SCREEN" },
    });
    expect(device.status).toBe(201);
    await page.waitForSelector("#devices tr:has-text('P-SCREEN'):has-text('activated on')");

    const [taken] = readingsOf(bpm, 2, 0);
    const message = uplinkMessage(bpm, "screen-1", [taken!]);
    await client.publishAsync(message.topic, message.payload, { qos: 1 });
    const pressure = taken!.records.find((r) => r.metric === "blood_pressure")!;
    const row = page.locator("#readings tr", { hasText: "blood_pressure" });
    // Values with their units, as the device's catalogue entry gives them.
    await expect
      .poll(() => row.innerText())
      .toContain(`${pressure.value_1}/${pressure.value_2} mmHg`);
    const pulse = taken!.records.find((r) => r.metric === "pulse")!;
    expect(await page.locator("#readings tr", { hasText: "pulse" }).innerText()).toContain(
      `${pulse.value_1} beats per minute`,
    );
    expect(await row.innerText()).toContain("P-SCREEN");
    expect(await page.innerText("#batches")).toMatch(
      new RegExp(`^${taken!.records.length} records in 1 batch since connected$`),
    );
    // The totals catch up at the next overview (every 5 s).
    const records = page.locator("#accounts .numbers div", { hasText: "records" }).locator("b");
    await expect
      .poll(() => records.innerText(), { timeout: 15_000 })
      .toBe(String(taken!.records.length));
    expect(errors).toEqual([]);
  }, 45_000);
});
