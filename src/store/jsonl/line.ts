// One physical line = one JSON object ending in a short checksum field. A torn write cannot
// produce a valid line, and a damaged interior line is caught even when it still parses (a flipped
// digit inside a value would otherwise load as silently different state).
import { createHash } from "node:crypto";

const SUFFIX = /,"h":"([0-9a-f]{8})"\}$/;
const SUFFIX_LENGTH = ',"h":"00000000"}'.length;

function checksum(body: string): string {
  return createHash("sha256").update(body).digest("hex").slice(0, 8);
}

/** `body` is a serialised JSON object with at least one field; returns the line with its newline. */
export function sealLine(body: string): string {
  return `${body.slice(0, -1)},"h":"${checksum(body)}"}\n`;
}

/** Returns the parsed object, or undefined when the line is not one `sealLine` wrote. */
export function openLine(text: string): Record<string, unknown> | undefined {
  const m = SUFFIX.exec(text);
  if (m === null) return undefined;
  const body = `${text.slice(0, -SUFFIX_LENGTH)}}`;
  if (checksum(body) !== m[1]) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined;
  return parsed as Record<string, unknown>;
}
