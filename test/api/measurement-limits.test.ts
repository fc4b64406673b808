import { describe, expect, it } from "vitest";
import { toIsoMicros } from "../../src/core/time.ts";
import type { NewMeasurement } from "../../src/store/types-ingest.ts";
import { T0 } from "./helpers.ts";
import { DAY, type Envelope, follow, ok, series } from "./hwi-fixtures.ts";
import { type Record, useMeasurementLab } from "./measurement-fixtures.ts";

const isoOf = toIsoMicros;

/** Spec 8 (limits and rules 1, 2) and 2.6 on the four measurement endpoints. */
describe("measurements: flat and paginated answers", () => {
  const m = useMeasurementLab();
  it("without page and without a time range: only the last 30 days of the lab clock (spec 8)", async () => {
    await m.insert([m.at(T0 - 40 * DAY), m.at(T0 - 29 * DAY), m.at(T0 - DAY), m.at(T0 + 60_000)]);
    for (const url of Object.values(m.endpoints(""))) {
      expect(await m.timestamps(url)).toEqual([
        "2024-09-17T04:10",
        "2024-10-15T04:10",
        "2024-10-16T04:11",
      ]);
    }
    m.lab.advance(20 * DAY);
    expect(await m.timestamps(m.endpoints("").device)).toEqual([
      "2024-10-15T04:10",
      "2024-10-16T04:11",
    ]);
    // With page, every reading (no window).
    const paged = ok<Envelope>(await m.get(m.endpoints("page=1").device));
    expect(paged.count).toBe(4);
  });

  it("without page over more than 30 days: the oldest 1000 (spec 8); within 30 days: all", async () => {
    // 1200 readings, one every 72 minutes: 60 days.
    await m.insert(
      series(m.lab.dev, m.bpm, 1200, T0, {}).map((r, i) => ({
        ...r,
        timestamp: T0 - 60 * DAY + i * 72 * 60_000,
        created: T0 - 60 * DAY + i * 72 * 60_000 + 1000,
      })),
    );
    const from = isoOf(T0 - 61 * DAY);
    for (const url of Object.values(m.endpoints(`timestamp__gte=${from}`))) {
      const rows = ok<Record[]>(await m.get(url));
      expect(rows).toHaveLength(1000);
      expect(rows[0]!.timestamp).toBe(isoOf(T0 - 60 * DAY));
      expect(rows[999]!.timestamp).toBe(isoOf(T0 - 60 * DAY + 999 * 72 * 60_000));
    }
    // An open-ended range counts as more than 30 days.
    expect(
      ok<Record[]>(await m.get(m.endpoints(`timestamp__lt=${isoOf(T0)}`).device)),
    ).toHaveLength(1000);
    expect(ok<Record[]>(await m.get(m.endpoints(`created__gte=${from}`).device))).toHaveLength(
      1000,
    );
    // 30 days exactly, by timestamp or by created: every match.
    const window = `timestamp__gte=${isoOf(T0 - 30 * DAY)}&timestamp__lt=${isoOf(T0)}`;
    expect(ok<Record[]>(await m.get(m.endpoints(window).device))).toHaveLength(600);
  });

  it("within 30 days there is no 1000 cap without page", async () => {
    await m.insert(series(m.lab.dev, m.bpm, 1500, T0));
    const day = `timestamp__gte=${isoOf(T0 - 2 * DAY)}&timestamp__lt=${isoOf(T0)}`;
    expect(ok<Record[]>(await m.get(m.endpoints(day).device))).toHaveLength(1500);
    const byCreated = `created__gte=${isoOf(T0 - 2 * DAY)}&created__lt=${isoOf(T0 + DAY)}`;
    expect(ok<Record[]>(await m.get(m.endpoints(byCreated).patient))).toHaveLength(1500);
    expect(ok<Record[]>(await m.get(m.endpoints("").v2Device))).toHaveLength(1500);
  });

  it("with page: the envelope, absolute next/previous kept with the query, page_size capped", async () => {
    await m.insert(series(m.lab.dev, m.bpm, 250, T0));
    for (const url of Object.values(m.endpoints("metric__name=pulse&page=1"))) {
      const first = ok<Envelope<Record>>(await m.get(url));
      expect(first.count).toBe(250);
      expect(first.results).toHaveLength(100);
      expect(first.previous).toBeNull();
      const next = new URL(first.next!);
      expect(next.origin).toBe("http://localhost");
      expect(next.searchParams.get("metric__name")).toBe("pulse");
      expect(next.searchParams.get("page")).toBe("2");
      const second = ok<Envelope<Record>>(await follow(m.lab, first.next!));
      expect(second.results[0]!.id).toBe(first.results[99]!.id + 1);
      expect(new URL(second.previous!).searchParams.get("page")).toBe("1");
      const third = ok<Envelope<Record>>(await follow(m.lab, second.next!));
      expect(third).toMatchObject({ next: null });
      expect(third.results).toHaveLength(50);
    }
    const big = ok<Envelope>(await m.get(m.endpoints("page=1&page_size=5000").device));
    expect(big.results).toHaveLength(250);
    const last = ok<Envelope>(await m.get(m.endpoints("page=last&page_size=100").device));
    expect(last.results).toHaveLength(50);
    const past = await m.get(m.endpoints("page=4").device);
    expect(past.statusCode).toBe(404);
    expect(past.json()).toEqual({ detail: "Invalid page." });
  });

  it("following next gives what page numbers give, even when readings arrive in between", async () => {
    await m.insert(series(m.lab.dev, m.bpm, 250, T0));
    const first = ok<Envelope<Record>>(await m.get(m.endpoints("page=1").device));
    const second = ok<Envelope<Record>>(await follow(m.lab, first.next!));
    // An offline store uploads an old reading: every later record moves one place on.
    await m.insert([m.at(T0 - 10 * DAY, { measurementIndex: 9999 })]);
    const third = ok<Envelope<Record>>(await follow(m.lab, second.next!));
    expect(third.count).toBe(251);
    const all = ok<Envelope<Record>>(await m.get(m.endpoints("page=1&page_size=1000").device));
    const ids = all.results.map((r) => r.id);
    expect(second.results.map((r) => r.id)).toEqual(ids.slice(101, 201));
    expect(third.results.map((r) => r.id)).toEqual(ids.slice(200, 251));
    // And with nothing new, the walk matches page for page.
    const again = ok<Envelope<Record>>(await m.get(m.endpoints("page=2").device));
    const walked = ok<Envelope<Record>>(await follow(m.lab, again.next!));
    expect(walked.results.map((r) => r.id)).toEqual(ids.slice(200, 251));
  });

  it("absolute URLs follow the configured base URL", async () => {
    await m.lab.close();
    await m.open({ baseUrl: "https://lab.example/rpm" });
    await m.insert(series(m.lab.dev, m.bpm, 3, T0));
    const body = ok<Envelope>(
      await m.call("GET", `hwi-devices/${m.bpm}/measurements/?page=1&page_size=1`),
    );
    expect(body.next).toBe(
      `https://lab.example/rpm/clients/acme-dev/hwi/hwi-devices/${m.bpm}/measurements/?page=2&page_size=1`,
    );
  });

  it("orders by timestamp then id: the records of one reading stay together, pages are stable", async () => {
    const t = T0 - DAY;
    const metrics = ["blood_pressure", "pulse", "battery_percentage"];
    const rows: NewMeasurement[] = [];
    for (const [k, ts] of [t + 60_000, t, t + 60_000, t].entries()) {
      for (const metric of metrics) {
        rows.push(
          m.at(ts, {
            metric,
            measurementIndex: k + 1,
            value2: metric === "blood_pressure" ? 80 : null,
          }),
        );
      }
    }
    await m.insert(rows);
    const all = ok<Record[]>(await m.get(m.endpoints("").device));
    const keys = all.map((r) => [r.timestamp, r.id] as const);
    const sorted = [...keys].sort((a, b) => a[0].localeCompare(b[0]) || a[1] - b[1]);
    expect(keys).toEqual(sorted);
    const paged: number[] = [];
    for (let page = 1; page <= 4; page++) {
      const body = ok<Envelope<Record>>(
        await m.get(m.endpoints(`page=${page}&page_size=3`).device),
      );
      paged.push(...body.results.map((r) => r.id));
    }
    expect(paged).toEqual(all.map((r) => r.id));
  });
});
