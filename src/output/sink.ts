// ToolOutput: the one mutable state of a tool call. Tools write into it; a tracker turns every change
// into ops, and flushes are paced by the adaptive publisher (first change at once, then ≥ 100 ms apart
// and ~100 KB/s of batch bytes). Forced flushes — completion, error, abort, memo checkpoints — bypass
// the pacing once; close() cancels the trailing timer so nothing is emitted after the terminal flush.
// Every `rebaseEvery`-th flush is a base batch, so durable recovery replays at most that many batches.
import { SpoolError } from "../errors/index.js";
import {
  AdaptivePublisher,
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  utf8Length as byteLength,
  type CaptureMetadata,
  type Retain,
  type Truncation,
} from "../capture/index.js";
import { isBase, track, type Op, type Tracker } from "../delta/index.js";
import { WindowLedger } from "./ledger.js";
import { batchSize } from "./measure.js";
import { fitHead, fitTail } from "./window.js";

export interface TextBlock {
  type: "text";
  text: string;
}
export interface ImageBlock {
  type: "image";
  /** base64 */
  data: string;
  mimeType: string;
}
export type Usage = Record<string, number>;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

export interface ToolOutputState {
  content: [TextBlock, ...ImageBlock[]];
  details: Record<string, unknown>;
  usage?: Usage;
  addedTools?: string[];
  terminate: boolean;
  truncation: Mutable<Truncation>;
}

export interface FlushInfo {
  /** The batch begins with `r`: store it tagged "base". */
  readonly base: boolean;
  /** Bypassed pacing (completion, error, abort, memo, explicit rebase). */
  readonly forced: boolean;
}

export interface ToolOutputOptions {
  readonly retain?: Retain;
  readonly maxBytes?: number;
  readonly maxLines?: number;
  /** Receives every flushed batch, in order; the first one is a base. */
  readonly onFlush: (ops: readonly Op[], info: FlushInfo) => void;
  /** Errors thrown by onFlush from the pacing timer. Default: rethrown asynchronously. */
  readonly onError?: (error: unknown) => void;
  /** A state recovered from durable storage: the sink continues from it instead of starting empty. */
  readonly initial?: ToolOutputState;
  /** A base batch every this many flushes (default 50). */
  readonly rebaseEvery?: number;
  readonly minIntervalMs?: number;
  readonly targetBytesPerSecond?: number;
}

export interface ToolOutput {
  /** Append to the single text block (windowed by the tool's retention). */
  write(text: string): void;
  /** Replace the retained text (e.g. a capture view that evicted lines); the tracker still finds t + a. */
  replace(text: string): void;
  /**
   * The retained text lost its first `drop` UTF-16 units and gained `text` at its end (a capture view
   * that slid): recorded as explicit t + a, O(text) instead of a diff of the window. Not windowed again.
   */
  slide(drop: number, text: string): void;
  /**
   * Append to the text that follows the window (what was kept and where the rest is, the status
   * sentence of a failed call): never windowed, never counted in the output's totals. Writes after a
   * footer extend it rather than the window.
   */
  footer(text: string): void;
  /** Append an image block; images are never windowed. */
  image(image: { data: string; mimeType: string }): void;
  /** Totals and truncation from the capture layer, without resending text. */
  capture(metadata: CaptureMetadata): void;
  /** A plain object: mutate it directly and the changes are published granularly. */
  readonly details: Record<string, unknown>;
  /** Accumulates numeric counters. */
  usage(usage: Usage): void;
  addTools(names: readonly string[]): void;
  terminate(value: boolean): void;
  /**
   * Apply several changes as one: nothing is published until `fn` returns, so a reader never sees new
   * text with the previous totals (the first change after a quiet spell is otherwise published at once).
   */
  batch(fn: () => void): void;
  /** Publish pending changes: paced, or now with force. */
  flush(options?: { force?: boolean }): void;
  /** The next flush is a base batch. */
  rebase(): void;
  /** The current state (read-only by convention). */
  readonly state: Readonly<ToolOutputState>;
  /** Final forced flush; afterwards writes throw and nothing more is emitted. */
  close(): void;
  readonly closed: boolean;
}

export class ToolOutputClosedError extends SpoolError {
  constructor() {
    super(
      "SPOOL_OUTPUT_CLOSED",
      "this tool output is closed (the call has ended); writes after tool_end are not delivered — finish writing before execute() returns",
    );
  }
}

const DEFAULT_REBASE_EVERY = 50;
const TEXT_PATH = ["content", 0, "text"] as const;

function countNewlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

function emptyTruncation(maxBytes: number, maxLines: number): Mutable<Truncation> {
  return {
    truncated: false,
    truncatedBy: null,
    totalLines: 0,
    totalBytes: 0,
    outputLines: 0,
    outputBytes: 0,
    maxLines,
    maxBytes,
    cutLines: 0,
    lastLinePartial: false,
  };
}

export function createToolOutput(options: ToolOutputOptions): ToolOutput {
  const retain = options.retain ?? "tail";
  const maxBytes = options.maxBytes ?? options.initial?.truncation.maxBytes ?? DEFAULT_MAX_BYTES;
  const maxLines = options.maxLines ?? options.initial?.truncation.maxLines ?? DEFAULT_MAX_LINES;
  const rebaseEvery = options.rebaseEvery ?? DEFAULT_REBASE_EVERY;
  const initial: ToolOutputState = options.initial
    ? structuredClone(options.initial)
    : { content: [{ type: "text", text: "" }], details: {}, terminate: false, truncation: emptyTruncation(maxBytes, maxLines) };
  const tracker: Tracker<ToolOutputState> = track(initial);
  const s = tracker.state;
  let closed = false;
  let flushes = 0;
  let forcing = false;
  // totalLines = newlines written + 1 if the stream ends inside a line; kept incrementally.
  let openLine = !initial.content[0].text.endsWith("\n") && initial.content[0].text.length > 0;
  let newlines = initial.truncation.totalLines - (openLine ? 1 : 0);

  const publisher = new AdaptivePublisher<number, Op[]>({
    snapshot: () => flushes,
    update: () => {
      if (flushes > 0 && flushes % rebaseEvery === 0) tracker.rebase();
      const ops = tracker.flush();
      return ops.length > 0 ? ops : undefined;
    },
    measure: batchSize,
    publish: (ops) => {
      flushes++;
      options.onFlush(ops, { base: isBase(ops), forced: forcing });
    },
    onError:
      options.onError ??
      ((err) => {
        queueMicrotask(() => {
          throw err;
        });
      }),
    ...(options.minIntervalMs !== undefined ? { minIntervalMs: options.minIntervalMs } : {}),
    ...(options.targetBytesPerSecond !== undefined ? { targetBytesPerSecond: options.targetBytesPerSecond } : {}),
  });

  let batching = 0;
  let batched = false;
  const changed = (): void => {
    if (closed) throw new ToolOutputClosedError();
    if (batching > 0) batched = true;
    else publisher.markDirty();
  };
  const guard = (): void => {
    if (closed) throw new ToolOutputClosedError();
  };

  // A footer sits after the window and outside its limits: a tail window would otherwise evict lines
  // to make room for the sentence that says how many lines it shows.
  let footer = "";
  // The window's line lengths, kept incrementally so a write costs O(its own text plus the lines it
  // evicts), never O(window); its text is read back only on the rare general fit.
  const ledger = new WindowLedger();
  ledger.reset(initial.content[0].text);
  const currentWindow = (): string => {
    const full = tracker.target.content[0].text;
    return footer === "" ? full : full.slice(0, full.length - footer.length);
  };
  const markCut = (cutBy: "bytes" | "lines" | null): void => {
    const t = s.truncation;
    t.outputBytes = ledger.bytes;
    t.outputLines = ledger.lines;
    if (cutBy && !t.truncated) {
      t.truncated = true;
      t.truncatedBy = cutBy;
    }
  };
  const setText = (text: string, cutBy: "bytes" | "lines" | null): void => {
    ledger.reset(text);
    s.content[0].text = text + footer;
    markCut(cutBy);
  };

  /** Append `text` (non-empty) to the window under the retention rule. */
  const writeWindow = (text: string): void => {
    const t = s.truncation;
    const before = retain === "head" ? currentWindow() : "";
    ledger.add(text);
    if (ledger.bytes <= t.maxBytes && ledger.lines <= t.maxLines) {
      // Recorded as an explicit append: the sink knows what changed, so the tracker never diffs the window.
      tracker.append(TEXT_PATH, text);
      markCut(null);
      return;
    }
    if (retain === "tail") {
      // Evict whole lines from the front (a front-drop op); when that is not enough (one line, or a
      // write bigger than the window) the general fit below cuts inside the joined text.
      const by = ledger.lines > t.maxLines ? "lines" : "bytes";
      let drop = 0;
      while ((ledger.bytes > t.maxBytes || ledger.lines > t.maxLines) && ledger.canDrop) drop += ledger.dropFirst();
      if (ledger.bytes <= t.maxBytes && ledger.lines <= t.maxLines) {
        // Append, then drop from the front (the drop may reach into the new text); one t + a at flush.
        tracker.append(TEXT_PATH, text);
        if (drop > 0) tracker.truncate(TEXT_PATH, drop);
        markCut(by);
        return;
      }
      const fit = fitTail(currentWindow() + text, t.maxBytes, t.maxLines);
      setText(fit.text, fit.cut ? fit.by : null);
      return;
    }
    const fit = fitHead(before, text, t.maxBytes, t.maxLines);
    setText(fit.text, fit.cut ? fit.by : null);
  };

  const flushNow = (): void => {
    forcing = true;
    try {
      publisher.flush(true);
    } finally {
      forcing = false;
    }
  };

  return {
    write(text) {
      guard();
      if (text.length === 0) return;
      if (footer !== "") {
        // The window is closed once a footer says what it holds; later text (an error sentence)
        // follows the footer instead of shifting the window the footer describes.
        footer += text;
        tracker.append(TEXT_PATH, text);
        changed();
        return;
      }
      const t = s.truncation;
      t.totalBytes += byteLength(text);
      newlines += countNewlines(text);
      openLine = !text.endsWith("\n");
      t.totalLines = newlines + (openLine ? 1 : 0);
      writeWindow(text);
      changed();
    },
    replace(text) {
      guard();
      setText(text, null);
      changed();
    },
    slide(drop, text) {
      guard();
      if (!Number.isSafeInteger(drop) || drop < 0 || drop > ledger.length) {
        throw new RangeError(`slide() drop must be an integer from 0 to the retained text's length ${ledger.length}, got ${String(drop)}`);
      }
      if (footer !== "") {
        // The window is not at the end of the block any more: say it as a replacement.
        setText(currentWindow().slice(drop) + text, null);
        changed();
        return;
      }
      if (text.length > 0) tracker.append(TEXT_PATH, text);
      if (drop > 0) tracker.truncate(TEXT_PATH, drop);
      if (ledger.dropUnits(drop)) ledger.add(text);
      else ledger.reset(currentWindow());
      markCut(null);
      changed();
    },
    footer(text) {
      guard();
      // The footer ends the text block, so extending it is an explicit append.
      if (text.length > 0) {
        footer += text;
        tracker.append(TEXT_PATH, text);
      }
      changed();
    },
    image(image) {
      guard();
      (s.content as (TextBlock | ImageBlock)[]).push({ type: "image", data: image.data, mimeType: image.mimeType });
      changed();
    },
    batch(fn) {
      guard();
      batching++;
      try {
        fn();
      } finally {
        batching--;
        if (batching === 0 && batched) {
          batched = false;
          changed();
        }
      }
    },
    capture(metadata) {
      guard();
      s.truncation = { ...metadata.truncation };
      // Later agent-side writes (a footer) continue the capture's totals.
      openLine = ledger.open;
      newlines = metadata.truncation.totalLines - (openLine ? 1 : 0);
      changed();
    },
    get details() {
      // Mutations through this object are tracked but do not arm the publisher by themselves; they
      // ride on the next write/flush (at the latest the terminal one).
      return s.details;
    },
    usage(usage) {
      guard();
      // Re-read through the proxy: `s.usage ??= {}` would hand back the raw object, untracked.
      if (!s.usage) s.usage = {};
      const u = s.usage;
      for (const [k, v] of Object.entries(usage)) if (typeof v === "number" && Number.isFinite(v)) u[k] = (u[k] ?? 0) + v;
      changed();
    },
    addTools(names) {
      guard();
      s.addedTools = [...names];
      changed();
    },
    terminate(value) {
      guard();
      s.terminate = value;
      changed();
    },
    flush(opts) {
      guard();
      if (opts?.force) flushNow();
      else publisher.flush(false);
    },
    rebase() {
      guard();
      tracker.rebase();
      flushNow();
    },
    get state() {
      return tracker.target;
    },
    close() {
      if (closed) return;
      if (tracker.dirty) flushNow();
      publisher.dispose();
      closed = true;
    },
    get closed() {
      return closed;
    },
  };
}
