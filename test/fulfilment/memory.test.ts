import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../src/store/open.ts";
import { fulfilmentSuite } from "./suite.ts";

fulfilmentSuite("SQLite :memory:", { open: (deps) => openStore("memory", deps) });

let dir: string | undefined;
fulfilmentSuite("SQLite file (WAL)", {
  async open(deps) {
    dir = mkdtempSync(join(tmpdir(), "rpmlab-fulfilment-"));
    return openStore(`sqlite:${join(dir, "lab.db")}`, deps);
  },
  async cleanup() {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  },
});
