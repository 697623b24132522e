// `spool fold [FILE]`: fold a stream of wire batches (one JSON array of WireOps per line) and print
// the resulting value. The same decode + apply every spool client uses; handy for debugging a stream.
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { apply, decoder } from "../delta/index.js";
import type { Command } from "./commands.js";

const usage = `Usage: spool fold [FILE] [--pretty]

Reads wire batches, one JSON array of WireOps per line (from FILE, or stdin when FILE is
omitted or "-"), decodes and applies them in order, and prints the folded value as JSON.`;

export const foldCommand: Command = {
  name: "fold",
  summary: "fold a stream of wire op batches (JSON lines) and print the value",
  async run(args) {
    const { values, positionals } = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: { pretty: { type: "boolean" }, help: { type: "boolean", short: "h" } },
    });
    if (values.help) {
      process.stdout.write(usage + "\n");
      return 0;
    }
    if (positionals.length > 1) {
      process.stderr.write(`spool fold: expected at most one FILE, got ${positionals.length}.\n${usage}\n`);
      return 2;
    }
    const file = positionals[0];
    const input = file === undefined || file === "-" ? process.stdin : createReadStream(file);
    const source = file ?? "stdin";
    const dec = decoder();
    let state: unknown = undefined;
    let lineNo = 0;
    const lines = createInterface({ input, crlfDelay: Infinity });
    try {
      for await (const line of lines) {
        lineNo++;
        if (line.trim() === "") continue;
        let batch: unknown;
        try {
          batch = JSON.parse(line);
        } catch (err) {
          throw new Error(`${source}:${lineNo}: not JSON (${(err as Error).message}); each line must be one JSON array of wire ops`);
        }
        if (!Array.isArray(batch)) {
          throw new Error(`${source}:${lineNo}: expected a JSON array of wire ops, got ${batch === null ? "null" : typeof batch}`);
        }
        try {
          state = apply(state as object | undefined, dec.decode(batch));
        } catch (err) {
          throw new Error(`${source}:${lineNo}: ${(err as Error).message}`);
        }
      }
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (e.code === "ENOENT") {
        process.stderr.write(`spool fold: no such file ${file}. Pass a path to a JSON-lines file of wire batches.\n`);
        return 1;
      }
      process.stderr.write(`spool fold: ${e.message}\n`);
      return 1;
    }
    process.stdout.write(JSON.stringify(state ?? null, null, values.pretty ? 2 : undefined) + "\n");
    return 0;
  },
};
