// "The store named by --store": jsonl (the default), sqlite, or a PostgreSQL URL, from the flag or
// else SPOOL_STORE. One place decides, so run, serve, sessions, inspect and gc read it alike.
import type { OptionSpec } from "./command.js";
import { UsageError } from "./usage-error.js";
import { redactUrl } from "../store/index.js";

export const STORE = {
  type: "string",
  value: "STORE",
  help: "where sessions live: jsonl (default), sqlite, or postgres://USER@HOST/DB\n(sslmode and PG* variables as pg reads them); default $SPOOL_STORE",
} as const satisfies OptionSpec;

export type StoreTarget = { readonly kind: "jsonl" } | { readonly kind: "sqlite" } | DatabaseTarget;
/** A PostgreSQL store: its URL, and the URL as messages show it (password redacted). */
export type DatabaseTarget = { readonly kind: "postgres"; readonly url: string; readonly shown: string };

export function storeTarget(flag: string | undefined): StoreTarget {
  const raw = flag ?? process.env.SPOOL_STORE ?? "jsonl";
  if (raw === "jsonl" || raw === "") return { kind: "jsonl" };
  if (raw === "sqlite") {
    // Refused before anything is made: the store would fail only once the session directory exists.
    const sqlite = typeof process.getBuiltinModule === "function" ? process.getBuiltinModule("node:sqlite") : undefined;
    if (sqlite === undefined) {
      throw new UsageError(
        `${flag === undefined ? "SPOOL_STORE=sqlite" : "--store sqlite"} needs Node's built-in node:sqlite, which Node ${process.version} does not have: run spool on Node 22.13 or newer, or use --store jsonl`,
        { help: false },
      );
    }
    return { kind: "sqlite" };
  }
  if (/^postgres(ql)?:\/\//i.test(raw)) {
    try {
      new URL(raw);
    } catch {
      throw new UsageError(
        `${flag === undefined ? "SPOOL_STORE" : "--store"} is not a valid URL: ${redactUrl(raw)} (use postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE)`,
      );
    }
    return { kind: "postgres", url: raw, shown: redactUrl(raw) };
  }
  const from = flag === undefined ? "SPOOL_STORE" : "--store";
  throw new UsageError(`${from} must be jsonl, sqlite or a postgres:// URL, got "${redactUrl(raw)}"`);
}
