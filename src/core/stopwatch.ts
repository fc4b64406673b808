import { performance } from "node:perf_hooks";

/**
 * Real elapsed milliseconds since the call, for what happens on real sockets (the latency of an
 * HTTP request). Not the lab's Clock: a virtual clock says nothing about how long I/O took.
 */
export function startStopwatch(): () => number {
  const start = performance.now();
  return () => performance.now() - start;
}
