// The bound on one stdio message, kept in front of the SDK's transport. That transport holds at most
// 10 MiB of a message and past it closes itself (SDK 1.32.2: its ReadBuffer throws, its data handler
// closes the transport), so one tool call from a model with an 11 MB argument ended the server — every
// command and background process with it — and said nothing on stderr. Here a line over the bound is
// dropped as it streams (memory: the bound, plus 4 KiB of its start and end) and reported instead, so
// the request can be answered and the session goes on. Lines within it pass byte-identical, whole.
import { Transform, type TransformCallback } from "node:stream";

/** What is known of a dropped line: its size, and its first and last bytes (where a request's id is). */
export interface OversizeMessage {
  readonly bytes: number;
  readonly head: string;
  readonly tail: string;
}

/** Bytes of an oversize line's start and end kept for its report. */
const KEPT = 4096;

export function createMessageGuard(maxBytes: number, onOversize: (message: OversizeMessage) => void): Transform {
  // The line so far, while it is within the bound; past it only its size, head and tail.
  let parts: Buffer[] = [];
  let size = 0;
  let head: Buffer | undefined;
  let tail: Buffer = Buffer.alloc(0);
  const take = (bytes: Buffer): void => {
    size += bytes.length;
    if (head === undefined) {
      parts.push(bytes);
      if (size <= maxBytes) return;
      // Over the bound: only the start and the end are kept from here on.
      const line = Buffer.concat(parts);
      parts = [];
      head = line.subarray(0, KEPT);
      tail = line.subarray(Math.max(0, line.length - KEPT));
      return;
    }
    if (head.length < KEPT) head = Buffer.concat([head, bytes.subarray(0, KEPT - head.length)]);
    tail = bytes.length >= KEPT ? bytes.subarray(bytes.length - KEPT) : Buffer.concat([tail, bytes]).subarray(-KEPT);
  };
  const end = (guard: Transform, newline: boolean): void => {
    if (head === undefined) {
      if (newline) parts.push(Buffer.from("\n"));
      if (parts.length > 0) guard.push(parts.length === 1 ? parts[0] : Buffer.concat(parts));
    } else {
      onOversize({ bytes: size, head: head.toString("utf8"), tail: tail.toString("utf8") });
    }
    parts = [];
    size = 0;
    head = undefined;
    tail = Buffer.alloc(0) as Buffer;
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      let start = 0;
      for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
        take(chunk.subarray(start, nl));
        end(this, true);
        start = nl + 1;
      }
      if (start < chunk.length) take(chunk.subarray(start));
      callback();
    },
    flush(callback: TransformCallback) {
      if (size > 0) end(this, false);
      callback();
    },
  });
}

/** A JSON-RPC id as a request's text starts (`{"jsonrpc":"2.0","id":…`) or ends (`…,"id":…}`) with it. */
const ID_AT_START = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")/;
const ID_AT_END = /[{,]\s*"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$/;

/** The id of the request a dropped line held, when its start or end shows it (undefined for a notification). */
export function oversizeRequestId(message: OversizeMessage): string | number | undefined {
  const found = ID_AT_START.exec(message.head) ?? ID_AT_END.exec(message.tail);
  if (found === null) return undefined;
  try {
    return JSON.parse(found[1]!) as string | number;
  } catch {
    return undefined;
  }
}
