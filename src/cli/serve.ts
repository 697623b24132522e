// `spool serve`: the viewer for every session under a root — finished ones replayed from their logs,
// live ones (recorded by another `spool run` process) followed as their logs grow (session-watch.ts).
import { parseArgs } from "node:util";
import { createStateHost } from "../harness/index.js";
import type { Command } from "./commands.js";
import { UsageError } from "./cli-errors.js";
import { DEFAULT_ROOT, sessionsDir } from "./session-catalog.js";
import { watchSessions } from "./session-watch.js";
import { startViewerServer } from "./viewer-server.js";

const USAGE = `Usage: spool serve [--port N] [--root DIR] [--interval MS]

Serves the live viewer for every session under DIR/sessions (default .spool) until Ctrl-C. Sessions
being recorded by a running \`spool run\` are followed live; finished ones are replayed from their logs.`;

export const serveCommand: Command = {
  name: "serve",
  summary: "serve the viewer for every recorded session (live ones streaming)",
  async run(args) {
    const { values } = parseArgs({
      args: [...args],
      options: { port: { type: "string" }, root: { type: "string" }, interval: { type: "string" }, help: { type: "boolean", short: "h" } },
    });
    if (values.help) {
      process.stdout.write(USAGE + "\n");
      return 0;
    }
    const port = values.port === undefined ? 0 : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port needs a port number 0-65535, got "${values.port}"`);
    const interval = values.interval === undefined ? 250 : Number(values.interval);
    if (!Number.isInteger(interval) || interval < 20) throw new UsageError(`--interval needs a whole number of milliseconds ≥ 20, got "${values.interval}"`);
    const root = values.root ?? DEFAULT_ROOT;

    const host = createStateHost();
    const sessions = watchSessions(root, host, (line) => process.stderr.write(`${line}\n`));
    await sessions.refresh();
    const viewer = await startViewerServer({ states: host, sessionsDir: sessionsDir(root), port });
    process.stderr.write(`spool: serving ${sessions.count} session${sessions.count === 1 ? "" : "s"} from ${sessionsDir(root)} at ${viewer.pageUrl}\n`);
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      sessions.refresh().finally(() => (busy = false));
    }, interval);
    await new Promise<void>((resolve) => {
      process.once("SIGINT", resolve);
      process.once("SIGTERM", resolve);
    });
    clearInterval(timer);
    await viewer.close();
    return 0;
  },
};
