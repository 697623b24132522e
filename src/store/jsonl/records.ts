// The JSONL record shapes (docs/session-format.md): headers, and one transaction per line.
import { CorruptSessionError, UnsupportedFormatError } from "../errors.js";
import { encodeScopeId } from "../scope.js";
import { isWellFormed } from "../wellformed.js";
import type { PreparedWrite } from "../write.js";
import { sealLine } from "./line.js";

export const SESSION_FORMAT = "spool-session";
export const SCOPE_FORMAT = "spool-scope";
export const FORMAT_VERSION = 1;

export interface SessionHeader {
  readonly format: typeof SESSION_FORMAT;
  readonly version: number;
  readonly sessionId: string;
  /** The next commit gets at least this seq (a fork starts above its parent's high-water mark). */
  readonly nextSeq: number;
  readonly createdAt: string;
  readonly forkedFrom?: { readonly sessionId: string; readonly seq: number };
}

export interface ScopeHeader {
  readonly format: typeof SCOPE_FORMAT;
  readonly version: number;
  readonly sessionId: string;
  readonly scopeId: string;
}

/** A write as read from a line: values stay parsed (the main log is indexed, not copied into memory). */
export type DecodedWrite =
  | { readonly op: "set"; readonly ns: string; readonly key: string; readonly value: unknown }
  | { readonly op: "append"; readonly ns: string; readonly key: string; readonly value: unknown; readonly tag: string | undefined }
  | { readonly op: "delete" | "clear"; readonly ns: string; readonly key: string }
  | { readonly op: "retire"; readonly scope: string };

export interface DecodedTransaction {
  readonly seq: number;
  readonly writes: readonly DecodedWrite[];
  readonly file: string;
  readonly line: number;
}

/** The in-memory form of a decoded write (values as JSON text): what a sidecar's scope holds. */
export function toPrepared(w: DecodedWrite): PreparedWrite {
  switch (w.op) {
    case "set":
      return { op: "set", ns: w.ns, key: w.key, json: JSON.stringify(w.value) };
    case "append":
      return { op: "append", ns: w.ns, key: w.key, json: JSON.stringify(w.value), tag: w.tag };
    default:
      return w;
  }
}

export function checkVersion(file: string, o: Record<string, unknown>, format: string): void {
  if (o.format !== format) {
    throw new CorruptSessionError(file, 1, `the first line is not a ${format} header (format ${JSON.stringify(o.format)})`);
  }
  if (o.version !== FORMAT_VERSION) throw new UnsupportedFormatError(file, o.version);
}

export function checkMainHeader(file: string, h: Record<string, unknown>): SessionHeader {
  checkVersion(file, h, SESSION_FORMAT);
  if (typeof h.sessionId !== "string" || typeof h.nextSeq !== "number" || !Number.isSafeInteger(h.nextSeq) || h.nextSeq < 1) {
    throw new CorruptSessionError(file, 1, "the session header lacks a sessionId or a valid nextSeq");
  }
  return h as unknown as SessionHeader;
}

export function encodeHeader(h: SessionHeader | ScopeHeader): string {
  return sealLine(JSON.stringify(h));
}

/** Builds the line from already-serialised values so a 50 KB element is never stringified twice. */
export function encodeTransaction(seq: number, scope: string, writes: readonly PreparedWrite[]): string {
  let body = `{"seq":${seq}`;
  if (scope !== "") body += `,"scope":${JSON.stringify(scope)}`;
  body += ',"w":[';
  for (let i = 0; i < writes.length; i++) {
    const w = writes[i]!;
    if (i > 0) body += ",";
    switch (w.op) {
      case "set":
        body += `{"op":"set","ns":${JSON.stringify(w.ns)},"key":${JSON.stringify(w.key)},"value":${w.json}}`;
        break;
      case "append":
        body += `{"op":"append","ns":${JSON.stringify(w.ns)},"key":${JSON.stringify(w.key)},"value":${w.json}`;
        body += w.tag === undefined ? "}" : `,"tag":${JSON.stringify(w.tag)}}`;
        break;
      case "delete":
      case "clear":
        body += `{"op":"${w.op}","ns":${JSON.stringify(w.ns)},"key":${JSON.stringify(w.key)}}`;
        break;
      case "retire":
        body += `{"op":"retire","scope":${JSON.stringify(w.scope)}}`;
        break;
    }
  }
  return sealLine(`${body}]}`);
}

const isName = (v: unknown): v is string => typeof v === "string" && isWellFormed(v);

export function decodeTransaction(
  o: Record<string, unknown>,
  file: string,
  line: number,
  /** null for the main log; the sidecar's scope id otherwise. */
  scope: string | null,
): DecodedTransaction {
  const bad: (detail: string) => never = (detail) => {
    throw new CorruptSessionError(file, line, detail);
  };
  const seq = o.seq;
  if (typeof seq !== "number" || !Number.isSafeInteger(seq) || seq < 1) bad("a transaction record needs a positive integer seq");
  if (scope === null ? o.scope !== undefined : o.scope !== scope) {
    bad(`the record's scope ${JSON.stringify(o.scope)} does not belong in this file`);
  }
  const raw = o.w;
  if (!Array.isArray(raw) || raw.length === 0) bad("a transaction record needs a non-empty write list");
  const writes: DecodedWrite[] = [];
  for (const w of raw as unknown[]) {
    if (typeof w !== "object" || w === null) bad("a write is not an object");
    const r = w as Record<string, unknown>;
    if (r.op === "retire") {
      if (scope !== null) bad("a sidecar cannot retire a scope");
      if (!isName(r.scope)) bad("a retire write needs a scope id");
      try {
        encodeScopeId(r.scope);
      } catch {
        bad(`retired scope id ${JSON.stringify(r.scope)} is not a valid id`);
      }
      writes.push({ op: "retire", scope: r.scope as string });
      continue;
    }
    if (!isName(r.ns) || r.ns.length === 0 || !isName(r.key)) bad("a write needs a non-empty ns and a key");
    const ns = r.ns as string;
    const key = r.key as string;
    switch (r.op) {
      case "set":
        if (!("value" in r)) bad("a set write needs a value");
        writes.push({ op: "set", ns, key, value: r.value });
        break;
      case "append":
        if (!("value" in r)) bad("an append write needs a value");
        if (r.tag !== undefined && (!isName(r.tag) || r.tag.length === 0)) bad("a list tag must be a non-empty string");
        writes.push({ op: "append", ns, key, value: r.value, tag: r.tag as string | undefined });
        break;
      case "delete":
      case "clear":
        writes.push({ op: r.op, ns, key });
        break;
      default:
        bad(`unknown write op ${JSON.stringify(r.op)}`);
    }
  }
  return { seq: seq as number, writes, file, line };
}
