// `spool serve`: the viewer for every session under a root — finished ones replayed from their logs,
// live ones (recorded by another `spool run` process) followed as their logs grow (session-watch.ts).
import { createStateHost } from "../harness/index.js";
import { DEFAULT_ROOT, sessionsDir } from "../store/index.js";
import { defineCommand, intOption } from "./command.js";
import { watchSessions } from "./session-watch.js";
import { ROOT } from "./shared-options.js";
import { startViewerServer } from "./viewer-server.js";

export const serveCommand = defineCommand({
  name: "serve",
  summary: "serve the viewer for every recorded session (live ones streaming)",
  synopsis: "[--port N] [--root DIR] [--interval MS]",
  description:
    "Serves the live viewer for every session under DIR/sessions until Ctrl-C. Sessions being recorded\n" +
    "by a running 'spool run' are followed live; finished ones are replayed from their logs.",
  options: {
    port: { type: "string", value: "N", help: "port on 127.0.0.1 (default: any free port)" },
    root: ROOT,
    interval: { type: "string", value: "MS", help: "how often to look for changes, in milliseconds (default 250)" },
  },
  async run(values) {
    const port = intOption("port", values.port, 0, 65535) ?? 0;
    const interval = intOption("interval", values.interval, 20, 3_600_000) ?? 250;
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
});
