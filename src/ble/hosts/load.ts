import { createRequire } from "node:module";
import { dirname } from "node:path";
import { RpmlabError } from "../../core/errors.ts";

/**
 * The one place that loads noble and bleno, lazily. Both construct their HCI socket while they
 * are being required; the shim package (packages/hci-socket-shim, installed in place of
 * @abandonware/bluetooth-hci-socket by npm overrides) asks this global slot for it. The slot is
 * set only for the synchronous duration of one load, so every host instance gets the socket
 * chosen for it.
 */
const SLOT = Symbol.for("rpmlab.hci-socket.provider");
const require = createRequire(import.meta.url);

/** Makes the socket object a host gets for `new BluetoothHciSocket()`. */
export type SocketFactory = () => object;

type Slot = { [SLOT]?: SocketFactory };

function withSockets<T>(factory: SocketFactory, load: () => T): T {
  const slot = globalThis as Slot;
  const previous = slot[SLOT];
  slot[SLOT] = factory;
  try {
    return load();
  } catch (error) {
    throw new RpmlabError(
      "E_BLE_HOST",
      `could not start the BLE host stack: ${(error as Error).message}`,
      {},
      error,
    );
  } finally {
    if (previous === undefined) delete slot[SLOT];
    else slot[SLOT] = previous;
  }
}

/** A new noble central: noble's own with-custom-binding builds a fresh instance per call. */
export function loadNoble(factory: SocketFactory): unknown {
  return withSockets(factory, () => {
    const withCustomBinding = require("@abandonware/noble/with-custom-binding") as (
      options: object,
    ) => unknown;
    return withCustomBinding({});
  });
}

/**
 * A new bleno peripheral. bleno keeps its bindings and management socket in module singletons,
 * so each call evaluates a fresh copy of its modules (dropping them from the require cache
 * before and after) — one bleno, one connection, per instance.
 */
export function loadBleno(factory: SocketFactory): unknown {
  return withSockets(factory, () => {
    const entry = require.resolve("@abandonware/bleno");
    const root = `${dirname(entry)}/`;
    const forget = (): void => {
      for (const key of Object.keys(require.cache))
        if (key.startsWith(root)) delete require.cache[key];
    };
    forget();
    try {
      const bleno = require(entry) as object;
      const mgmt = require.cache[`${root}lib/hci-socket/mgmt.js`]?.exports as unknown;
      if (mgmt !== undefined) managementOf.set(bleno, mgmt);
      return bleno;
    } finally {
      forget();
    }
  });
}

/** Each bleno instance's management socket module (lib/hci-socket/mgmt.js), by the instance. */
const managementOf = new WeakMap<object, unknown>();

/**
 * The management module of a bleno `loadBleno` made: its own copy, out of the require cache by
 * now, which bleno's SMP gives the keys of its pairings to (Load Long Term Keys).
 */
export function blenoManagement(bleno: unknown): unknown {
  return typeof bleno === "object" && bleno !== null ? managementOf.get(bleno) : undefined;
}

/**
 * Ends a noble or bleno instance's isDevUp poll, which neither stack can stop: its hci.js re-arms
 * a raw 1 s setTimeout after each poll, for ever, which keeps the process alive once the host is
 * done with (stopped, or refused by an adapter it calls unsupported). With the poll method
 * replaced, the chain ends at its next tick.
 */
export function stopDevUpPoll(host: unknown): void {
  const hci = (host as { _bindings?: { _hci?: { pollIsDevUp?: () => void } } })._bindings?._hci;
  if (hci !== undefined) hci.pollIsDevUp = () => undefined;
}

type Hook = (...args: unknown[]) => void;
const listenersOf = (event: "SIGINT" | "exit"): Hook[] =>
  process.listeners(event as "SIGINT") as Hook[];

/**
 * Runs `init` (the first stateChange listener, which starts a host) and removes the SIGINT and
 * exit listeners the host adds to the process: on SIGINT, noble and bleno call process.exit(1)
 * when theirs is the last listener, which would cut the lab's own shutdown short, and a lab with
 * hundreds of hosts would pile up hundreds of them. The lab owns the process's signals.
 */
export function withoutProcessHooks<T>(init: () => T): T {
  let sigint = new Set(listenersOf("SIGINT"));
  let exit = new Set(listenersOf("exit"));
  const sweep = (): void => {
    for (const l of listenersOf("SIGINT")) if (!sigint.has(l)) process.off("SIGINT", l);
    for (const l of listenersOf("exit")) if (!exit.has(l)) process.off("exit", l);
  };
  // Queued before init's tick (below), this tick runs after the microtasks of the caller, which
  // may add the lab's own listeners meanwhile (rpmlab device's untilSignal once went that way,
  // and Ctrl-C then killed the process): those are kept, only the host's tick is swept.
  process.nextTick(() => {
    sigint = new Set(listenersOf("SIGINT"));
    exit = new Set(listenersOf("exit"));
  });
  try {
    return init();
  } finally {
    sweep();
    // noble starts its bindings in a process.nextTick queued by the first stateChange listener
    // (noble.js lazy init), and adds its hooks there: this tick runs after it.
    process.nextTick(sweep);
  }
}
