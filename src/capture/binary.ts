// Binary sniffing over the first 4 KiB of raw output (the window Gemini CLI uses): two NUL bytes in a
// row, or (in a sample of at least 64 bytes) more than a quarter of the decoded characters being NUL
// or U+FFFD. A lone NUL is text: `find -print0`, `git ls-files -z`, `env -0` and /proc/*/cmdline
// separate their items with one (2.6–8.7% of the characters here), and the view shows it as U+2400
// (output-capture.ts). Any NUL used to decide binary, so one `printf 'a\0b\n'` hid the thousand
// lines after it. Measured on the first 4 KiB of 60,000 files here (/usr/bin, /usr/lib, /usr/share,
// a Python tree): the old rule called 22,892 binary, this one 22,885 — the other seven are two
// tzdb.dat (isolated NULs, 5.3%) and five test files of 4 to 44 bytes. Executables, objects, archives
// and databases have NUL runs from their first header; compressed data and images are caught by the
// U+FFFD share; UTF-16 text (every other byte NUL) by the share.
// Decoding the sample in streaming mode keeps a character cut by the sample's end from counting as
// invalid (decoded as if complete, it would become U+FFFD and push valid UTF-8 text toward the binary verdict).
import { Buffer } from "node:buffer";

export const SNIFF_BYTES = 4096;
const INVALID_SHARE = 0.25;
/** Below this, a few stray Latin-1 bytes (or NULs) would dominate the share; only a NUL run counts. */
const MIN_SAMPLE_FOR_SHARE = 64;
const NUL_RUN = Buffer.from([0, 0]);

export class BinarySniffer {
  private seen = 0;
  private readonly sample: Buffer[] = [];
  private decided = false;
  /** The last sniffed byte was a NUL (a run may span two reads). */
  private endsInNul = false;
  binary = false;

  /** Feeds raw bytes; returns true at the moment output is first judged binary. */
  push(chunk: Buffer): boolean {
    if (this.decided) return false;
    const part = chunk.subarray(0, SNIFF_BYTES - this.seen);
    if (part.length === 0) return false;
    if ((this.endsInNul && part[0] === 0) || part.includes(NUL_RUN)) return this.decide(true);
    this.endsInNul = part[part.length - 1] === 0;
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
    for (let i = text.indexOf("\0"); i !== -1; i = text.indexOf("\0", i + 1)) invalid++;
    return invalid / text.length > INVALID_SHARE;
  }

  private decide(binary: boolean): boolean {
    this.decided = true;
    this.binary = binary;
    this.sample.length = 0;
    return binary;
  }
}
