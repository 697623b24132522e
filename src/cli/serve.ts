// `spool serve`: the viewer for every session under a root — finished ones replayed from their logs,
// live ones (recorded by another `spool run` process) followed as they grow (session-watch.ts).
import { countOf, printableText } from "../errors/index.js";
import { createStateHost } from "../harness/index.js";
import { DEFAULT_ROOT, followPostgresCommits, listPostgresSpills, openPostgresSpill, sessionsDir, type Follower } from "../store/index.js";
import { defineCommand, intOption } from "./command.js";
import { databaseLister } from "./database-listing.js";
import { listEntries, sessionDirWarnings } from "./session-catalog.js";
import { watchSessions } from "./session-watch.js";
import { ROOT } from "./shared-options.js";
import { portInUse } from "./port-in-use.js";
import { STORE, storeTarget } from "./store-option.js";
import { startViewerServer } from "./viewer-server.js";

/** The longest wait between two looks of an idle serve (nothing live, nothing changing). */
const IDLE_INTERVAL_MS = 1000;

export const serveCommand = defineCommand({
  name: "serve",
  summary: "serve the viewer for every recorded session (live ones streaming)",
  synopsis: "[--port N] [--root DIR] [--store STORE] [--interval MS]",
  description:
    "Serves the live viewer for every session under DIR/sessions until Ctrl-C. Sessions being recorded\n" +
    "by a running 'spool run' are followed live; finished ones are replayed from their logs. With a\n" +
    "postgres:// store it serves every machine's sessions in that database, told of new commits by\n" +
    "LISTEN/NOTIFY.",
  options: {
    port: { type: "string", value: "N", help: "port on 127.0.0.1 (default: any free port)" },
    root: ROOT,
    store: STORE,
    interval: {
      type: "string",
      value: "MS",
      help: "how often to look for changes, in milliseconds (default 250; 5000 with postgres); with nothing live or changing, down to once a second",
    },
  },
  async run(values) {
    const port = intOption("port", values.port, 0, 65535) ?? 0;
    const root = values.root ?? DEFAULT_ROOT;
    const target = storeTarget(values.store);
    // With a database, commits announce themselves; the timer only notices writers that went away.
    const interval = intOption("interval", values.interval, 20, 3_600_000) ?? (target.kind === "postgres" ? 5000 : 250);
    let follower: Follower | undefined;
    if (target.kind !== "postgres") for (const warning of sessionDirWarnings(root)) process.stderr.write(`spool serve: warning: ${printableText(warning)}\n`);
    const lister = target.kind === "postgres" ? databaseLister(root, target) : undefined;
    const host = createStateHost();
    const sessions = watchSessions(host, {
      list: lister ? () => lister.list() : () => listEntries(root, target),
      report: (line) => process.stderr.write(`${line}\n`),
    });
    let viewer: Awaited<ReturnType<typeof startViewerServer>> | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    // Whatever fails on the way (the database, the port), every connection and timer is closed after,
    // so the process ends with its one-line error instead of hanging on an open handle.
    try {
      // Refreshes run one at a time; one asked for meanwhile runs once more after it (session-watch.ts).
      // A look that fails (the database went away) is said once and tried again at the next one.
      let failed: string | undefined;
      const kick = (): Promise<void> =>
        sessions.refresh().then(
          () => void (failed = undefined),
          (err: unknown) => {
            const message = err instanceof Error ? err.message : String(err);
            if (message !== failed) process.stderr.write(`spool serve: could not look at the sessions: ${message} (trying again at the next look)\n`);
            failed = message;
          },
        );
      if (target.kind === "postgres") {
        // A notification only says "look now": what changed is read from the listing (each session's
        // next seq), so a commit whose notification was lost — the LISTEN connection dropped — is seen
        // at the look that follows the reconnect.
        follower = await followPostgresCommits(target.url, kick, { onGap: kick });
      }
      await sessions.refresh();
      // Spills recorded on other machines are streamed from the database, chunk by chunk.
      const remoteSpill =
        target.kind === "postgres"
          ? async (id: string, name: string) =>
              (await listPostgresSpills(target.url, id)).some((s) => s.name === name) ? openPostgresSpill(target.url, id, name) : undefined
          : undefined;
      viewer = await startViewerServer({ states: host, sessionsDir: sessionsDir(root), port, ...(remoteSpill ? { remoteSpill } : {}) }).catch(
        (err: unknown) => {
          throw portInUse(err, port, "pick another with --port N, or leave --port out for any free port");
        },
      );
      const from = target.kind === "postgres" ? target.shown : sessionsDir(root);
      // Listening for Ctrl-C before saying it serves: a SIGINT sent as soon as the line is read (a
      // script, a test under load) found no handler yet and ended the process by the signal.
      const stop = new Promise<void>((resolve) => {
        process.once("SIGINT", resolve);
        process.once("SIGTERM", resolve);
      });
      process.stderr.write(`spool: serving ${countOf(sessions.count, "session")} from ${from} at ${viewer.pageUrl}\n`);
      // A look every `interval` while a session is live or something changed; with every session
      // finished and nothing changing, each next look waits twice as long, up to a second (or the
      // interval, if longer), so a new session shows within a second of an idle spell. Each look runs
      // cold (never optimised at a few calls a second): over 5 finished sessions of 20 MB, looks every
      // 250 ms cost ~3% of a core above an idle Node process on this VM, every second ~1%.
      let delay = interval;
      const next = (): void => {
        timer = setTimeout(() => {
          void kick().then(() => {
            if (stopped) return;
            delay = sessions.quiet ? Math.min(Math.max(interval, IDLE_INTERVAL_MS), delay * 2) : interval;
            next();
          });
        }, delay);
      };
      next();
      await stop;
    } finally {
      stopped = true;
      clearTimeout(timer);
      await follower?.close();
      await sessions.close();
      await lister?.close();
      await viewer?.close();
    }
    return 0;
  },
});
