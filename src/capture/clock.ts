// Milliseconds on a monotonic clock, for intervals and deadlines within one process. Not
// performance.now(): its first call loads perf_hooks (ten modules, 1 ms), a cost `spool run` paid on
// every command for a clock it only subtracts.
// Imported, not the global: `process` (like `Buffer`) is a getter on globalThis, called on every use.
import { hrtime } from "node:process";

export function monotonicMs(): number {
  return Number(hrtime.bigint()) / 1e6;
}
