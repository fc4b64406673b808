/**
 * Resolves on the first SIGINT or SIGTERM, then removes its handlers (so a second Ctrl-C during
 * a slow shutdown gets Node's default behaviour and ends the process). An aborted `cancel`
 * removes them too (a command that ends by itself), leaving the promise pending.
 */
export function untilSignal(cancel?: AbortSignal): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const off = () => {
      process.off("SIGINT", on);
      process.off("SIGTERM", on);
      cancel?.removeEventListener("abort", off);
    };
    const on = (signal: NodeJS.Signals) => {
      off();
      resolve(signal);
    };
    process.on("SIGINT", on);
    process.on("SIGTERM", on);
    cancel?.addEventListener("abort", off, { once: true });
  });
}
