// Output written as it is produced, at the pace its reader takes it: text gathers into chunks of
// CHUNK_CHARS, and a chunk the stream cannot take at once (a slow pipe) is waited out ('drain') before
// the next is made. A report of any length holds one chunk at a time, never the whole report.
import { once } from "node:events";

export const CHUNK_CHARS = 64 * 1024;

export class PacedOutput {
  readonly #stream: NodeJS.WritableStream;
  #chunk = "";

  constructor(stream: NodeJS.WritableStream) {
    this.#stream = stream;
  }

  /** Resolves when the stream has taken the text (or bytes) as far as it asks; awaiting it keeps memory bounded. */
  async write(data: string | Buffer): Promise<void> {
    if (typeof data === "string") {
      this.#chunk += data;
      if (this.#chunk.length >= CHUNK_CHARS) await this.flush();
      return;
    }
    await this.flush();
    await this.#put(data);
  }

  /** Hands what is gathered to the stream. */
  async flush(): Promise<void> {
    if (this.#chunk === "") return;
    const chunk = this.#chunk;
    this.#chunk = "";
    await this.#put(chunk);
  }

  async #put(data: string | Buffer): Promise<void> {
    // A closed reader (EPIPE) fails the wait; the command's own error listener ends the process quietly.
    if (!this.#stream.write(data)) await once(this.#stream, "drain");
  }
}
