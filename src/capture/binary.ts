// Binary sniffing over the first 4 KiB of raw output (the window Gemini CLI uses): any NUL byte, or
// (in a sample of at least 64 bytes) more than a quarter of the decoded characters being U+FFFD. Decoding the sample in streaming mode
// keeps a character cut by the sample's end from counting as invalid (decoded as if complete, it
// would become U+FFFD and push valid UTF-8 text toward the binary verdict).
import { Buffer } from "node:buffer";

export const SNIFF_BYTES = 4096;
const INVALID_SHARE = 0.25;
/** Below this, a few stray Latin-1 bytes would dominate the share; only NUL counts. */
const MIN_SAMPLE_FOR_SHARE = 64;

export class BinarySniffer {
  private seen = 0;
  private readonly sample: Buffer[] = [];
  private decided = false;
  binary = false;

  /** Feeds raw bytes; returns true at the moment output is first judged binary. */
  push(chunk: Buffer): boolean {
    if (this.decided) return false;
    const part = chunk.subarray(0, SNIFF_BYTES - this.seen);
    if (part.includes(0)) return this.decide(true);
    // Copied: the chunk may be a read buffer that is reused.
    this.sample.push(Buffer.from(part));
    this.seen += part.length;
    if (this.seen >= SNIFF_BYTES) return this.decide(this.mostlyInvalid());
    return false;
  }

  /** End of output: judge whatever sample there is. */
  end(): boolean {
    if (this.decided) return false;
    return this.decide(this.seen >= MIN_SAMPLE_FOR_SHARE && this.mostlyInvalid());
  }

  private mostlyInvalid(): boolean {
    const text = new TextDecoder("utf-8").decode(Buffer.concat(this.sample), { stream: true });
    if (text.length === 0) return false;
    let invalid = 0;
    for (let i = text.indexOf("\ufffd"); i !== -1; i = text.indexOf("\ufffd", i + 1)) invalid++;
    return invalid / text.length > INVALID_SHARE;
  }

  private decide(binary: boolean): boolean {
    this.decided = true;
    this.binary = binary;
    this.sample.length = 0;
    return binary;
  }
}
