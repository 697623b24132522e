// `spool fold [FILE]`: fold a stream of wire batches (one JSON array of WireOps per line) and print
// the resulting value. The same decode + apply every spool client uses; handy for debugging a stream.
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { apply, decoder } from "../delta/index.js";
import { defineCommand } from "./command.js";
import { UsageError } from "./usage-error.js";

export const foldCommand = defineCommand({
  name: "fold",
  summary: "fold a stream of wire batches (JSON lines) and print the value",
  synopsis: "[FILE] [--pretty]",
  description:
    'Reads wire batches, one JSON array of WireOps per line (from FILE, or stdin when FILE is omitted\nor "-"), decodes and applies them in order, and prints the folded value as JSON.',
  options: { pretty: { type: "boolean", help: "indent the printed value" } },
  positionals: { min: 0, max: 1, name: "at most one FILE" },
  async run(values, positionals) {
    const file = positionals[0];
    if (file === "") throw new UsageError("FILE is empty; pass a path to a JSON-lines file of wire batches, or - (or nothing) for stdin");
    const input = file === undefined || file === "-" ? process.stdin : createReadStream(file);
    const source = file ?? "stdin";
    const dec = decoder();
    let state: unknown;
    let lineNo = 0;
    // Bad input, whatever the line: the stream is the user's to fix (exit 2).
    const bad = (detail: string, cause?: unknown): UsageError => new UsageError(`${source}:${lineNo}: ${detail}`, { cause });
    try {
      for await (const line of createInterface({ input, crlfDelay: Infinity })) {
        lineNo++;
        if (line.trim() === "") continue;
        let batch: unknown;
        try {
          // A byte order mark before the first line is read past, as compact does.
          batch = JSON.parse(lineNo === 1 && line.charCodeAt(0) === 0xfeff ? line.slice(1) : line);
        } catch (err) {
          throw bad(`not JSON (${(err as Error).message}); each line must be one JSON array of wire ops`, err);
        }
        if (!Array.isArray(batch)) throw bad(`expected a JSON array of wire ops, got ${batch === null ? "null" : typeof batch}`);
        try {
          state = apply(state as object | undefined, dec.decode(batch));
        } catch (err) {
          throw bad((err as Error).message, err);
        }
      }
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") throw new UsageError(`no such file ${file}; pass a path to a JSON-lines file of wire batches`);
      if (code === "EISDIR") throw new UsageError(`${file} is a directory; pass a path to a JSON-lines file of wire batches`);
      throw err;
    }
    let text: string;
    try {
      text = JSON.stringify(state ?? null, null, values.pretty ? 2 : undefined);
    } catch (err) {
      // Only a value nested past the stack's depth fails here (the ops already proved it is JSON).
      if (!(err instanceof RangeError)) throw err;
      throw new UsageError(`${source}: the folded value is nested too deeply to print (thousands of levels); fold a shallower stream`, { cause: err });
    }
    process.stdout.write(text + "\n");
    return 0;
  },
});
