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
import { isBase, Rope, track, type Op, type Tracker } from "../delta/index.js";
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
const BLOCK_PATH = ["content", 0] as const;
const TRUNCATION_PATH = ["truncation"] as const;
// The counters a write changes, written with tracker.set (one array each: the tracker remembers paths by identity).
const TOTAL_BYTES = ["truncation", "totalBytes"] as const;
const TOTAL_LINES = ["truncation", "totalLines"] as const;
const OUTPUT_BYTES = ["truncation", "outputBytes"] as const;
const OUTPUT_LINES = ["truncation", "outputLines"] as const;
const TRUNCATED = ["truncation", "truncated"] as const;
const TRUNCATED_BY = ["truncation", "truncatedBy"] as const;

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

  // What writes change is kept here, beside the tracker, and put into it once per flush (`settle`):
  // the text appended to the block and the units to drop from its front since, and the totals. A
  // write then costs its own text and the lines it evicts — no proxy trap, no path lookup, no pending
  // entry per write (four counters written through the state per write were a third of a write).
  // Whoever reads the state or writes the tracker otherwise settles first, so neither the tracker nor
  // a reader ever sees a partial write; the batches are what the per-write writes would have folded to.
  let pendingText = "";
  let pendingDrop = 0;
  let countsDirty = false;
  let totalBytes = initial.truncation.totalBytes;
  let truncated = initial.truncation.truncated;
  // The limits in force: the state's (a capture brings its own).
  let limitBytes = initial.truncation.maxBytes;
  let limitLines = initial.truncation.maxLines;
  let truncatedBy = initial.truncation.truncatedBy;
  // totalLines = newlines written + 1 if the stream ends inside a line; kept incrementally.
  let openLine = !initial.content[0].text.endsWith("\n") && initial.content[0].text.length > 0;
  let newlines = initial.truncation.totalLines - (openLine ? 1 : 0);

  // A footer sits after the window and outside its limits: a tail window would otherwise evict lines
  // to make room for the sentence that says how many lines it shows.
  let footer = "";
  // The window's line lengths, kept incrementally so a write costs O(its own text plus the lines it
  // evicts), never O(window); its text is read back only on the rare general fit.
  const ledger = new WindowLedger();
  ledger.reset(initial.content[0].text);

  // Between flushes the tracker usually holds nothing (the sink's own writes wait above), and then the
  // sink states the batch itself and writes the raw state: the ops the tracker would have made from
  // these edits, without its slot lookups, lane and drain (those were ~0.2 µs of a ~1 µs write, a third
  // more with a second tracker in the process). Only while the text block and the truncation object
  // each have one place in the state (an alias would need an op at every path); checked after every
  // flush the tracker makes — an alias can only be made through it, and that makes it dirty. The
  // sink's rope keeps the block's text without copying it per edit, as the tracker's does.
  let direct = false;
  let rope = new Rope(initial.content[0].text);

  /** Put one counter: through the tracker, or (`ops` given) into the raw state with its op. */
  const put = (
    ops: Op[] | null,
    path: typeof TOTAL_BYTES | typeof TOTAL_LINES | typeof OUTPUT_BYTES | typeof OUTPUT_LINES | typeof TRUNCATED | typeof TRUNCATED_BY,
    value: unknown,
  ): void => {
    if (ops === null) tracker.set(path, value);
    else {
      (tracker.target.truncation as unknown as Record<string, unknown>)[path[1]] = value;
      ops.push(["s", path, value]);
    }
  };
  /** The pending counters that changed, in one order for both ways. */
  const putCounts = (ops: Op[] | null): void => {
    countsDirty = false;
    // Only what changed is written: an unchanged counter would be a no-op write.
    const raw = tracker.target.truncation;
    const totalLines = newlines + (openLine ? 1 : 0);
    if (raw.totalBytes !== totalBytes) put(ops, TOTAL_BYTES, totalBytes);
    if (raw.totalLines !== totalLines) put(ops, TOTAL_LINES, totalLines);
    if (raw.outputBytes !== ledger.bytes) put(ops, OUTPUT_BYTES, ledger.bytes);
    if (raw.outputLines !== ledger.lines) put(ops, OUTPUT_LINES, ledger.lines);
    if (raw.truncated !== truncated) put(ops, TRUNCATED, truncated);
    if (raw.truncatedBy !== truncatedBy) put(ops, TRUNCATED_BY, truncatedBy);
  };

  /** Put what writes left pending into the tracker. */
  const settle = (): void => {
    if (pendingText.length > 0) {
      const text = pendingText;
      pendingText = "";
      tracker.append(TEXT_PATH, text);
    }
    if (pendingDrop > 0) {
      // After the append: the drop may reach into the new text.
      const drop = pendingDrop;
      pendingDrop = 0;
      tracker.truncate(TEXT_PATH, drop);
    }
    if (countsDirty) putCounts(null);
  };

  /** The batch of what writes left pending, stated by the sink and written into the raw state (see `direct`). */
  const directBatch = (): Op[] | undefined => {
    const ops: Op[] = [];
    const text = pendingText;
    const drop = pendingDrop;
    if (text.length > 0 || drop > 0) {
      pendingText = "";
      pendingDrop = 0;
      const block = tracker.target.content[0];
      const before = block.text;
      if (rope.value !== before) rope = new Rope(before);
      // As the tracker states an append followed by a front-drop: the drop (at most the old text),
      // then what is left of the appended text.
      const length = before.length;
      if (drop > 0) ops.push(["t", TEXT_PATH, drop <= length ? drop : length]);
      const kept = drop <= length ? text : text.slice(drop - length);
      if (kept.length > 0) ops.push(["a", TEXT_PATH, kept]);
      rope.append(text);
      if (drop > 0) rope.drop(drop);
      block.text = rope.value;
    }
    if (countsDirty) putCounts(ops);
    return ops.length > 0 ? ops : undefined;
  };

  const publisher = new AdaptivePublisher<number, Op[]>({
    snapshot: () => flushes,
    update: () => {
      if (flushes > 0 && flushes % rebaseEvery === 0) tracker.rebase();
      if (direct && !tracker.dirty) return directBatch();
      settle();
      const ops = tracker.flush();
      direct = tracker.positions(BLOCK_PATH) === 1 && tracker.positions(TRUNCATION_PATH) === 1;
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

  /** The window's text (settled: the tracker's block without the footer). */
  const currentWindow = (): string => {
    settle();
    const full = tracker.target.content[0].text;
    return footer === "" ? full : full.slice(0, full.length - footer.length);
  };
  const markCut = (cutBy: "bytes" | "lines" | null): void => {
    countsDirty = true;
    if (cutBy && !truncated) {
      truncated = true;
      truncatedBy = cutBy;
    }
  };
  /** Replace the window: what was pending for the block is superseded by the new value. */
  const setText = (text: string, cutBy: "bytes" | "lines" | null): void => {
    pendingText = "";
    pendingDrop = 0;
    ledger.reset(text);
    s.content[0].text = text + footer;
    markCut(cutBy);
  };

  /** Append `text` (non-empty) to the window under the retention rule; `ledger.add(text)` is done. */
  const writeWindow = (text: string): void => {
    const maxBytes = limitBytes;
    const maxLines = limitLines;
    if (ledger.bytes <= maxBytes && ledger.lines <= maxLines) {
      // An explicit append at the next settle: the sink knows what changed, so the tracker never diffs the window.
      pendingText = pendingText.length === 0 ? text : pendingText + text;
      markCut(null);
      return;
    }
    if (retain === "tail") {
      // Evict whole lines from the front (a front-drop op); when that is not enough (one line, or a
      // write bigger than the window) the general fit below cuts inside the joined text.
      const by = ledger.lines > maxLines ? "lines" : "bytes";
      let drop = 0;
      while ((ledger.bytes > maxBytes || ledger.lines > maxLines) && ledger.canDrop) drop += ledger.dropFirst();
      if (ledger.bytes <= maxBytes && ledger.lines <= maxLines) {
        // Append, then drop from the front (the drop may reach into the new text); one t + a at flush.
        pendingText = pendingText.length === 0 ? text : pendingText + text;
        pendingDrop += drop;
        markCut(by);
        return;
      }
      const fit = fitTail(currentWindow() + text, maxBytes, maxLines);
      setText(fit.text, fit.cut ? fit.by : null);
      return;
    }
    const fit = fitHead(currentWindow(), text, maxBytes, maxLines);
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

  const output: Omit<ToolOutput, "details" | "state" | "closed"> = {
    write(text) {
      guard();
      if (text.length === 0) return;
      if (footer !== "") {
        // The window is closed once a footer says what it holds; later text (an error sentence)
        // follows the footer instead of shifting the window the footer describes.
        footer += text;
        pendingText += text;
        changed();
        return;
      }
      ledger.add(text);
      totalBytes += ledger.addedBytes;
      newlines += ledger.addedNewlines;
      openLine = text.charCodeAt(text.length - 1) !== 10;
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
      // Appending first and dropping after is the same text: the drop is within the old window.
      pendingText += text;
      pendingDrop += drop;
      if (ledger.dropUnits(drop)) ledger.add(text);
      else ledger.reset(currentWindow());
      markCut(null);
      changed();
    },
    footer(text) {
      guard();
      // The footer ends the text block, so extending it is an explicit append.
      footer += text;
      pendingText += text;
      changed();
    },
    image(image) {
      guard();
      settle();
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
      settle();
      s.truncation = { ...metadata.truncation };
      // Later agent-side writes (a footer) continue the capture's totals.
      totalBytes = metadata.truncation.totalBytes;
      truncated = metadata.truncation.truncated;
      truncatedBy = metadata.truncation.truncatedBy;
      limitBytes = metadata.truncation.maxBytes;
      limitLines = metadata.truncation.maxLines;
      openLine = ledger.open;
      newlines = metadata.truncation.totalLines - (openLine ? 1 : 0);
      changed();
    },
    usage(usage) {
      guard();
      settle();
      // Re-read through the proxy: `s.usage ??= {}` would hand back the raw object, untracked.
      if (!s.usage) s.usage = {};
      const u = s.usage;
      for (const [k, v] of Object.entries(usage)) if (typeof v === "number" && Number.isFinite(v)) u[k] = (u[k] ?? 0) + v;
      changed();
    },
    addTools(names) {
      guard();
      settle();
      s.addedTools = [...names];
      changed();
    },
    terminate(value) {
      guard();
      settle();
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
    close() {
      if (closed) return;
      settle();
      if (tracker.dirty) flushNow();
      publisher.dispose();
      closed = true;
    },
  };
  // The accessors are defined one by one: an object literal with a getter is made in dictionary mode,
  // and then every write() is a hash lookup.
  Object.defineProperty(output, "details", {
    // Mutations through this object are tracked but do not arm the publisher by themselves; they
    // ride on the next write/flush (at the latest the terminal one).
    get: () => s.details,
    enumerable: true,
    configurable: true,
  });
  Object.defineProperty(output, "state", {
    get: () => {
      settle();
      return tracker.target;
    },
    enumerable: true,
    configurable: true,
  });
  Object.defineProperty(output, "closed", { get: () => closed, enumerable: true, configurable: true });
  return output as ToolOutput;
}
