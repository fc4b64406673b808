/**
 * Resolves on the first SIGINT or SIGTERM, then removes its handlers (so a second Ctrl-C during
 * a slow shutdown gets Node's default behaviour and ends the process).
 */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off("SIGINT", on);
      process.off("SIGTERM", on);
      resolve(signal);
    };
    process.on("SIGINT", on);
    process.on("SIGTERM", on);
  });
}
