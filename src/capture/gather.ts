// Output that trickles in (a line at a time) goes through spool's file I/O in gathered steps: after a
// read or write that caught up (a partly filled buffer), the next one waits until GATHER_MS after it,
// and whatever arrived meanwhile goes in one call. Each call is a trip through libuv's thread pool
// (queue, wake a worker, wake the loop): 100 background processes printing a line every 5 ms made
// ~40,000 of them a second on the file path (a read per line and an empty one after it) and ~20,000
// spill writes on the pipes, the largest part of spool's CPU (bench/processes.bench.mjs). A full
// buffer still goes at once, so a fast command is read and spilled as fast as before, and the first
// output after a quiet spell goes at once too: only a trickle waits, at most this long.
export const GATHER_MS = 50;
