// `spool serve`: the viewer for every session under a root — finished ones replayed from their logs,
// live ones (recorded by another `spool run` process) followed by re-reading their logs as they grow.
import { statSync } from "node:fs";
import { parseArgs } from "node:util";
import { createStateHost, type MutableState } from "../harness/index.js";
import type { Command } from "./commands.js";
import { UsageError } from "./cli-errors.js";
import { DEFAULT_ROOT, listSessions, loadSession, sessionsDir, type SessionEntry } from "./session-catalog.js";
import type { SessionSummary, SessionView } from "./session-view.js";
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
};
