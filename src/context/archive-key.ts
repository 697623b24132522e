// Content addresses for the archive: the first 16 lowercase hex chars of SHA-256 of the UTF-8 text,
// written into text as the marker `<<ccr:KEY>>` (the format chatcli's CCR store uses, so markers from
// either system read the same).
import { createHash } from "node:crypto";

export const KEY_LENGTH = 16;
const KEY_RE = /^[0-9a-f]{16}$/;

export function archiveKey(content: string): string {
  return createHash("sha256").update(content, "utf8").digest("hex").slice(0, KEY_LENGTH);
}

/** A key is exactly 16 lowercase hex chars; this also guards every path built from a key. */
export function isValidKey(key: string): boolean {
  return KEY_RE.test(key);
}

export function formatMarker(key: string): string {
  return `<<ccr:${key}>>`;
}

/** Distinct keys of canonical markers in `text`, in first-seen order. */
export function extractKeys(text: string): string[] {
  if (!text.includes("<<ccr:")) return [];
  const keys: string[] = [];
  for (const match of text.matchAll(/<<ccr:([0-9a-f]{16})>>/g)) {
    const key = match[1]!;
    if (!keys.includes(key)) keys.push(key);
  }
  return keys;
}
