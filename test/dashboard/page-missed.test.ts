import { readFileSync } from "node:fs";
import { createContext, runInContext } from "node:vm";
import { describe, expect, it } from "vitest";

const PAGE = readFileSync(new URL("../../src/dashboard/page.html", import.meta.url), "utf8");
const SCRIPT = PAGE.match(/<script>([\s\S]*?)<\/script>/)![1]!;
const CLOSED = "the lab closed the feed; reconnecting…";

/** An element as far as the page's script uses it. */
function element(onText?: (text: string) => void) {
  let text = "";
  return {
    hidden: false,
    value: "",
    className: "",
    title: "",
    rows: { length: 0 },
    get textContent() {
      return text;
    },
    set textContent(value: string) {
      text = value;
      onText?.(value);
    },
    addEventListener: () => undefined,
    replaceChildren: () => undefined,
    prepend: () => undefined,
    append: () => undefined,
    deleteRow: () => undefined,
  };
}

/**
 * Runs the dashboard page's script against a feed that sends `frames` and ends, and returns
 * every text its connection state (#state) showed, in order. No timer runs: the page's
 * retry and overview timers are only recorded.
 */
async function statesShown(frames: readonly string[]): Promise<string[]> {
  const states: string[] = [];
  let ended: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    ended = resolve;
  });
  const elements = new Map<string, ReturnType<typeof element>>();
  elements.set(
    "state",
    element((text) => {
      states.push(text);
      if (text === CLOSED) ended();
    }),
  );
  const storage = new Map<string, string>();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const f of frames) controller.enqueue(new TextEncoder().encode(f));
      controller.close();
    },
  });
  const fetch = async (path: string) =>
    path.endsWith("/overview/")
      ? {
          ok: true,
          status: 200,
          json: async () => ({ now: "2026-03-02T00:00:00Z", accounts: [], dead_letters: 0 }),
        }
      : { ok: true, status: 200, body };
  const context = createContext({
    document: {
      getElementById: (id: string) => {
        if (!elements.has(id)) elements.set(id, element());
        return elements.get(id);
      },
      createElement: () => element(),
    },
    location: { hash: "#token=admin", pathname: "/dashboard/" },
    history: { replaceState: () => undefined },
    sessionStorage: {
      getItem: (k: string) => storage.get(k) ?? null,
      setItem: (k: string, v: string) => storage.set(k, v),
      removeItem: (k: string) => storage.delete(k),
    },
    window: { addEventListener: () => undefined },
    performance: { now: () => 0 },
    setTimeout: () => 0,
    clearTimeout: () => undefined,
    fetch,
    URLSearchParams,
    TextDecoderStream,
    AbortController,
    Headers,
  });
  runInContext(SCRIPT, context);
  await done;
  return states;
}

const frame = (event: string, data: object) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
const tick = (second: number) => frame("clock", { now: `2026-03-02T00:00:${second}0Z` });

describe("dashboard page: missed events", () => {
  it("shows the events the page missed, added up, until it keeps up again: then live", async () => {
    const states = await statesShown([
      tick(0),
      frame("dropped", { count: 5 }),
      tick(1),
      frame("dropped", { count: 2 }),
      tick(2),
      tick(3),
      tick(4),
      tick(5),
    ]);
    expect(states.slice(states.indexOf("live"))).toEqual([
      "live",
      "live (missed 5 events: the page fell behind)",
      "live (missed 7 events: the page fell behind)",
      "live",
      CLOSED,
    ]);
  });
});
