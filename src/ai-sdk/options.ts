// createSpool's options, checked when the spool is created. Left to the tools, a bad value failed
// only later, on every model call, as tool text the model reads and the developer does not — and in
// the harness's units (a timeout of -1 s reported as "timeoutMs … got -1000").
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { MAX_WINDOW_BYTES, MAX_WINDOW_LINES } from "../capture/index.js";
import { givenValue, isWholeNumberIn, SpoolError, wholeNumberRange } from "../errors/index.js";
import { DEFAULT_ROOT, directoryProblem, isSessionId, sessionsDir } from "../store/index.js";

/** A createSpool option that cannot work; `option` names it as the caller wrote it (e.g. "limits.maxBytes"). */
export class SpoolOptionError extends SpoolError {
  constructor(
    readonly option: string,
    message: string,
  ) {
    super("SPOOL_AI_SDK_OPTION", `createSpool: ${option} ${message}`);
  }
}

// Node's timers hold at most 2^31-1 ms; the bash tool refuses a longer timeout.
const MAX_TIMEOUT_SECONDS = 2_147_483;

/** Every option createSpool reads; any other name is a typo that would be ignored without a word. */
const OPTIONS = ["root", "backend", "url", "session", "cwd", "env", "limits", "timeout", "context", "label", "store", "workspace", "onPrepare"] as const;
const BACKENDS = ["jsonl", "sqlite", "postgres"] as const;

/** Throws SpoolOptionError for the first option of `options` that cannot work. */
export function checkSpoolOptions(options: unknown): void {
  if (!isObject(options)) throw new SpoolOptionError("options", `must be an object (or left out), got ${show(options)}.`);
  for (const name of Object.keys(options)) {
    if (!(OPTIONS as readonly string[]).includes(name)) throw new SpoolOptionError(name, `is not an option; the options are ${OPTIONS.join(", ")}.`);
  }
  const { root, backend, url, session, store, timeout, limits, cwd, env, context, label, onPrepare } = options;
  if (root !== undefined) {
    // "" resolved to the current directory: the session went to ./sessions/ beside the caller's files.
    if (root === "") throw new SpoolOptionError("root", `is empty; pass a directory, or leave root out for its default (${DEFAULT_ROOT}).`);
    if (typeof root !== "string") throw new SpoolOptionError("root", `must be a directory path, got ${show(root)}.`);
    const problem = directoryProblem(root, "root", sessionsDir(root));
    // The CLI's words for --root; the path they name may be DIR/sessions, not the root itself.
    if (problem !== undefined) throw new SpoolOptionError("root", `cannot hold sessions: ${problem}.`);
  }
  if (backend !== undefined && !(BACKENDS as readonly unknown[]).includes(backend))
    throw new SpoolOptionError("backend", `must be ${BACKENDS.map((b) => JSON.stringify(b)).join(", ")}, got ${show(backend)}.`);
  if (url !== undefined) {
    if (typeof url !== "string" || url === "") throw new SpoolOptionError("url", `must be a PostgreSQL URL (postgres://…), got ${show(url)}.`);
    // Shown without the URL: it may hold a password.
    if (backend !== "postgres") throw new SpoolOptionError("url", `is the database URL of backend "postgres"; add backend: "postgres", or leave url out.`);
  }
  if (session !== undefined) {
    if (!isSessionId(session))
      throw new SpoolOptionError(
        "session",
        `must be a session id (1-128 letters, digits, ".", "_" and "-", not starting with "." or "-"), got ${show(session)}.`,
      );
    if (store !== undefined) throw new SpoolOptionError("session", "cannot be given with store: a store passed in is the session; give one or the other.");
    // The same id kept by the other local backend: say which backend continues it, as `spool run
    // --session` does (the store said "session already exists … Open it instead").
    const kind = backend ?? "jsonl";
    const other = kind === "jsonl" ? "sqlite" : kind === "sqlite" ? "jsonl" : undefined;
    const dir = join(sessionsDir(typeof root === "string" ? root : DEFAULT_ROOT), session);
    if (other !== undefined && !existsSync(join(dir, `session.${kind}`)) && existsSync(join(dir, `session.${other}`)))
      throw new SpoolOptionError("session", `${session} is stored in ${other === "sqlite" ? "SQLite" : "JSONL"}; pass backend: "${other}" to continue it.`);
  }
  if (timeout !== undefined && !(typeof timeout === "number" && timeout > 0 && timeout <= MAX_TIMEOUT_SECONDS)) {
    throw new SpoolOptionError("timeout", `must be a number of seconds above 0 and at most ${MAX_TIMEOUT_SECONDS}, got ${show(timeout)}.`);
  }
  if (limits !== undefined) {
    if (!isObject(limits))
      throw new SpoolOptionError("limits", `must be an object { maxBytes, maxLines, maxSpillBytes, minFreeBytes, retain }, got ${show(limits)}.`);
    for (const [name, value] of Object.entries(limits)) {
      if (name === "maxBytes" || name === "maxLines" || name === "maxSpillBytes" || name === "minFreeBytes") {
        // The same ranges as run's and mcp's --max-bytes, --max-lines, --max-spill and --min-free.
        const min = name === "minFreeBytes" ? 0 : 1;
        const max = name === "maxBytes" ? MAX_WINDOW_BYTES : name === "maxLines" ? MAX_WINDOW_LINES : Number.MAX_SAFE_INTEGER;
        if (value !== undefined && !isWholeNumberIn(value, min, max))
          throw new SpoolOptionError(`limits.${name}`, `must be ${wholeNumberRange(min, max)}, got ${show(value)}.`);
      } else if (name === "retain") {
        if (value !== undefined && value !== "head" && value !== "tail")
          throw new SpoolOptionError("limits.retain", `must be "head" or "tail", got ${show(value)}.`);
      } else throw new SpoolOptionError(`limits.${name}`, "is not a limit; the limits are maxBytes, maxLines, maxSpillBytes, minFreeBytes and retain.");
    }
  }
  if (cwd !== undefined) {
    if (typeof cwd !== "string" || cwd === "") throw new SpoolOptionError("cwd", `must be a directory path, got ${show(cwd)}.`);
    let isDir = false;
    try {
      isDir = statSync(cwd).isDirectory();
    } catch {
      throw new SpoolOptionError("cwd", `${JSON.stringify(cwd)} does not exist; create it first or pass an existing directory.`);
    }
    if (!isDir) throw new SpoolOptionError("cwd", `${JSON.stringify(cwd)} is not a directory; pass the directory commands should run in.`);
  }
  if (env !== undefined) checkEnv(env);
  if (context !== undefined && !isObject(context)) throw new SpoolOptionError("context", `must be an object of context budgets, got ${show(context)}.`);
  if (label !== undefined && (typeof label !== "string" || label === ""))
    throw new SpoolOptionError("label", `must be a non-empty string (what \`spool sessions\` shows as the command), got ${show(label)}.`);
  if (onPrepare !== undefined && typeof onPrepare !== "function") throw new SpoolOptionError("onPrepare", `must be a function, got ${show(onPrepare)}.`);
}

// Left to the tools, a bad environment failed every bash call as "could not start /bin/bash … check
// that the shell exists" (a NUL byte), or was dropped without a word (a string spread into
// {0: "F", 1: "O", …}; a name with "=").
function checkEnv(env: unknown): void {
  if (!isObject(env)) throw new SpoolOptionError("env", `must be an object of variable names to string values, got ${show(env)}.`);
  for (const [name, value] of Object.entries(env)) {
    if (name === "" || name.includes("=") || name.includes("\0"))
      throw new SpoolOptionError("env", `has the variable name ${JSON.stringify(name)}; a name is not empty and holds no "=" or NUL.`);
    // Numbers work (the process gets their text); anything else would reach it as "[object Object]".
    if (value !== undefined && typeof value !== "string" && !(typeof value === "number" && Number.isFinite(value)))
      throw new SpoolOptionError(`env.${name}`, `must be a string (or undefined to leave it out), got ${show(value)}.`);
    if (typeof value === "string" && value.includes("\0")) throw new SpoolOptionError(`env.${name}`, "holds a NUL byte, which no environment variable can.");
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function show(v: unknown): string {
  return typeof v === "function" ? "a function" : givenValue(v);
}
