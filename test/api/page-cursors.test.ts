import { describe, expect, it } from "vitest";
import { PageCursors, type PageWindow } from "../../src/api/services/page-cursors.ts";
import type { MeasurementRow } from "../../src/store/types-ingest.ts";

/** Rows 1..n at timestamps 1000, 2000, …; a page of them as the store returns it. */
function fakeStore(n: () => number, firstId: () => number = () => 1) {
  const windows: PageWindow[] = [];
  const run = async (w: PageWindow) => {
    windows.push(w);
    const all = Array.from({ length: n() }, (_, i) => ({
      id: firstId() + i,
      timestamp: (i + 1) * 1000,
    }));
    const from = w.after === undefined ? (w.offset ?? 0) : all.findIndex((r) => r.id > w.after!.id);
    const rows = all.slice(from, from + w.limit) as unknown as MeasurementRow[];
    return w.count === true ? { rows, total: all.length } : { rows };
  };
  return { run, windows };
}

/** Keyset paging behind page numbers (src/api/services/page-cursors.ts). */
describe("PageCursors", () => {
  it("seeks where the previous full page ended, and answers as OFFSET would", async () => {
    const store = fakeStore(() => 25);
    const cursors = new PageCursors();
    const page = (offset: number) =>
      cursors.page("q", { limit: 10, offset, count: true }, store.run);
    const ids = async (offset: number) => (await page(offset)).rows.map((r) => r.id);
    expect(await ids(0)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(await ids(10)).toEqual([11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
    expect(await ids(20)).toEqual([21, 22, 23, 24, 25]);
    expect(
      store.windows.map((w) =>
        w.after === undefined ? `offset ${w.offset}` : `after ${w.after.id}`,
      ),
    ).toEqual(["offset 0", "after 9", "after 10", "after 19", "after 20"]);
  });

  it("falls back to OFFSET when the total changed, and never seeks for another query", async () => {
    let n = 30;
    const store = fakeStore(() => n);
    const cursors = new PageCursors();
    await cursors.page("q", { limit: 10, offset: 0, count: true }, store.run);
    n = 31;
    const second = await cursors.page("q", { limit: 10, offset: 10, count: true }, store.run);
    expect(second.total).toBe(31);
    expect(store.windows.slice(1).map((w) => w.after?.id ?? `offset ${w.offset}`)).toEqual([
      9,
      10,
      "offset 10",
    ]);
    await cursors.page("other", { limit: 10, offset: 20, count: true }, store.run);
    await cursors.page("q", { limit: 5, offset: 20, count: true }, store.run);
    expect(store.windows.slice(4).every((w) => w.after === undefined)).toBe(true);
  });

  it("falls back to OFFSET when the set changed under the same total (patients renamed into each other's ids)", async () => {
    let first = 1;
    const store = fakeStore(
      () => 30,
      () => first,
    );
    const cursors = new PageCursors();
    await cursors.page("q", { limit: 10, offset: 0, count: true }, store.run);
    first = 101;
    const second = await cursors.page("q", { limit: 10, offset: 10, count: true }, store.run);
    expect(second.rows.map((r) => r.id)).toEqual([
      111, 112, 113, 114, 115, 116, 117, 118, 119, 120,
    ]);
  });
});
