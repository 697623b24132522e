// Raw bytes in, bounded cleaned view out: binary sniff → streaming UTF-8 decode → ANSI removal →
// line assembly (CR frames, backspace, control characters, line cap) → bounded window.
// Everything here is synchronous and O(chunk); the view is only built when someone asks for it.
import { StringDecoder } from "node:string_decoder";
import { AnsiStripper } from "./ansi.js";
import { BinarySniffer } from "./binary.js";
import { LineCleaner } from "./lines.js";
import type { CaptureLimits, CaptureView, Truncation, TruncatedBy } from "./types.js";
import { utf8Length } from "./utf8.js";
import { BoundedWindow } from "./window.js";

export class OutputCapture {
  rawBytes = 0;
  // StringDecoder rather than TextDecoder: same streaming guarantee (no code point split across
  // reads, invalid bytes become U+FFFD) and measured 7× faster here on 64 KiB chunks.
  private readonly decoder = new StringDecoder("utf8");
  private readonly sniffer = new BinarySniffer();
  private readonly ansi = new AnsiStripper();
  private readonly lines: LineCleaner;
  private readonly window: BoundedWindow;

  constructor(readonly limits: CaptureLimits) {
    this.lines = new LineCleaner(limits.maxLineBytes);
    this.window = new BoundedWindow(limits);
  }

  get binary(): boolean {
    return this.sniffer.binary;
  }

  push(chunk: Buffer): void {
    this.rawBytes += chunk.length;
    this.sniffer.push(chunk);
    if (this.sniffer.binary) return;
    this.clean(this.decoder.write(chunk));
  }

  end(): void {
    this.sniffer.end();
    if (this.sniffer.binary) return;
    this.clean(this.decoder.end());
    const held = this.ansi.end();
    if (held) this.commit(this.lines.push(held));
  }

  /** Cheap (no view is built): have the limits been crossed? */
  get truncatedBy(): TruncatedBy | null {
    if (this.sniffer.binary) return "binary";
    if (this.totalLines > this.limits.maxLines) return "lines";
    if (this.totalBytes > this.limits.maxBytes) return "bytes";
    if (this.lines.cutLines > 0) return "line-length";
    return null;
  }

  get totalBytes(): number {
    return this.window.committedBytes + this.lines.openLineBytes;
  }

  get totalLines(): number {
    return this.window.committedLines + (this.lines.openLine.length > 0 ? 1 : 0);
  }

  view(spillPath?: string): CaptureView {
    const { maxLines, maxBytes } = this.limits;
    const base = { binary: this.binary, rawBytes: this.rawBytes, ...(spillPath !== undefined ? { spillPath } : {}) };
    if (this.sniffer.binary) {
      const truncation: Truncation = {
        truncated: true,
        truncatedBy: "binary",
        totalLines: 0,
        totalBytes: this.rawBytes,
        outputLines: 0,
        outputBytes: 0,
        maxLines,
        maxBytes,
        cutLines: 0,
        lastLinePartial: false,
      };
      return { text: "", truncation, ...base };
    }
    const openText = this.lines.openLine;
    const w = this.window.view({
      text: openText,
      bytes: this.lines.openLineBytes,
      lastCompletedBytes: this.lines.lastLineBytes,
    });
    const truncatedBy = this.truncatedBy;
    const truncation: Truncation = {
      truncated: truncatedBy !== null,
      truncatedBy,
      totalLines: this.totalLines,
      totalBytes: this.totalBytes,
      outputLines: w.outputLines,
      outputBytes: w.outputBytes,
      maxLines,
      maxBytes,
      cutLines: this.lines.cutLines,
      lastLinePartial: w.lastLinePartial,
      ...(w.lastLinePartial ? { lastLineBytes: w.lastLineBytes } : {}),
    };
    return { text: w.text, truncation, ...base };
  }

  private clean(text: string): void {
    if (text === "") return;
    if (!this.ansi.holding && this.lines.canTakePlain && LineCleaner.isPlain(text)) {
      this.commit(this.lines.pushPlain(text));
    } else {
      this.commit(this.lines.push(AnsiStripper.isPlain(text) && !this.ansi.holding ? text : this.ansi.push(text)));
    }
  }

  private commit(completed: string): void {
    if (completed !== "") this.window.append(completed, utf8Length(completed), this.lines.lines);
  }
}
