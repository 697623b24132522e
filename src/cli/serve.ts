// `spool serve`: the viewer for every session under a root — finished ones replayed from their logs,
// live ones (recorded by another `spool run` process) followed by re-reading their logs as they grow.
import { statSync } from "node:fs";
import { createStateHost, type MutableState } from "../harness/index.js";
import { DEFAULT_ROOT, sessionsDir } from "../store/index.js";
import { defineCommand, intOption } from "./command.js";
import { listSessions, loadSession, type SessionEntry } from "./session-catalog.js";
import { ROOT } from "./shared-options.js";
import type { SessionSummary, SessionView } from "./session-view.js";
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
    const list = host.state("sessions", { sessions: [] as SessionSummary[] });
    const states = new Map<string, { state: MutableState<SessionView>; stamp: string }>();
    // Re-read a session only when its files changed (size and mtime of the log and sidecars' dir).
    const stampOf = (e: SessionEntry): string => {
      const st = statSync(e.file);
      let side = "";
      try {
        side = String(statSync(`${e.file}.scopes`).mtimeMs);
      } catch {
        // no sidecars yet
      }
      return `${st.size}:${st.mtimeMs}:${side}`;
    };
    const refresh = async (): Promise<void> => {
      const summaries: SessionSummary[] = [];
      for (const entry of listSessions(root)) {
        try {
          const stamp = stampOf(entry);
          const known = states.get(entry.id);
          const loaded = await loadSession(entry);
          summaries.push(loaded.summary);
          if (!known) states.set(entry.id, { state: host.state(`session:${entry.id}`, loaded.view), stamp });
          else if (known.stamp !== stamp || loaded.live) {
            known.stamp = stamp;
            // Assigned whole and diffed by the tracker: a grown output leaves as an append.
            known.state.mutate((v) => Object.assign(v, loaded.view));
          }
        } catch (err) {
          process.stderr.write(`spool serve: skipping ${entry.id}: ${(err as Error).message}\n`);
        }
      }
      list.mutate((l) => void (l.sessions = summaries));
    };
    await refresh();
    const viewer = await startViewerServer({ states: host, sessionsDir: sessionsDir(root), port });
    process.stderr.write(`spool: serving ${states.size} session${states.size === 1 ? "" : "s"} from ${sessionsDir(root)} at ${viewer.pageUrl}\n`);
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      refresh().finally(() => (busy = false));
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
