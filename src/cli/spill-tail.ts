// While a command runs on a PostgreSQL store, its spill file is followed as it grows and streamed into
// the database chunk by chunk, so a viewer on another machine can read it before the run ends. Reads
// are 256 KiB at a time and wait for the database to take each one (backpressure: memory stays
// bounded however fast the command prints); the local file stays the complete copy whatever happens.
import { Buffer } from "node:buffer";
import type { FileHandle } from "node:fs/promises";
import { basename } from "node:path";
import { once } from "node:events";
import { finished } from "node:stream/promises";
import { createSpillUpload, SPILL_CHUNK_BYTES, type PostgresStore, type Store } from "../store/index.js";

export interface SpillTail {
  /** The spill path the command's output published (the first one is followed). */
  see(path: string): void;
  /** Reads the file to its end, completes the upload; resolves with a warning line on failure. */
  finish(): Promise<string | undefined>;
}

const POLL_MS = 100;
const isPostgres = (s: Store): s is PostgresStore => (s as Partial<PostgresStore>).kind === "postgres";

export function createSpillTail(store: Store): SpillTail {
  let done = false;
  let path: string | undefined;
  let running: Promise<string | undefined> | undefined;
  const follow = async (p: string, pg: PostgresStore): Promise<string | undefined> => {
    const upload = createSpillUpload(pg, basename(p));
    let failure: unknown;
    upload.on("error", (e) => (failure ??= e));
    let fh: FileHandle | undefined;
    try {
      // Loaded here, for a database store only: node:fs/promises brings readline with it, 1.2 ms of
      // every `spool run`'s startup.
      const { open } = await import("node:fs/promises");
      fh = await open(p, "r");
      const buf = Buffer.allocUnsafe(SPILL_CHUNK_BYTES);
      let pos = 0;
      for (;;) {
        if (failure !== undefined) throw failure;
        const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
        if (bytesRead > 0) {
          pos += bytesRead;
          if (!upload.write(Buffer.from(buf.subarray(0, bytesRead)))) await Promise.race([once(upload, "drain"), once(upload, "error")]);
          continue;
        }
        // At the end of what is written so far: done only once the command has finished writing.
        if (done) break;
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
      upload.end();
      await finished(upload);
      return undefined;
    } catch (e) {
      upload.destroy();
      return `the spill stays only in ${p}: ${(e as Error).message}`;
    } finally {
      await fh?.close();
    }
  };
  return {
    see(p) {
      if (path !== undefined || !isPostgres(store) || store.fallback !== undefined) return;
      path = p;
      running = follow(p, store);
    },
    async finish() {
      done = true;
      return running;
    },
  };
}
