// An image cut from an old tool result: the one-line text that takes its place, how to recognise
// that text again (so every pass is idempotent and text budgets never count, cut or swallow it), and
// the archive entry that keeps the image part exactly (media type, base64 or URL, provider extras).
// recall answers an image entry with a description, not the base64: a model reads base64 as 400,000
// characters of noise. A consumer that can carry an image in a tool result (the AI SDK's content
// output) asks recall for it (RecallOptions.images): the image itself comes back beside a one-line
// text, and the stub says so (`shown`). The exact part stays in the archive (`workspace.get(key)` +
// `parseImageEntry`) for a program that wants it back.
import { formatMarker } from "./archive-key.js";
import type { ImageInfo } from "./image-info.js";
import type { ImagePart } from "./messages.js";

const LEAD = "[Old image cleared — ";
const STUB_RE =
  /^\[Old image cleared — (?:image|[a-z0-9][\w.+-]*\/[\w.+-]+)(?:, \d+x\d+)?, \d+ bytes\. (?:Archived as <<ccr:[0-9a-f]{16}>>: recall (?:describes it; it cannot be shown again|shows it again)|It was not saved)\.\]$/;
/** Entries start with NUL, which no stub and no cleaned command output holds, so text is not taken for an image. */
const ENTRY_PREFIX = "\u0000spool:image\u0000";

function describe(info: ImageInfo): string {
  const size = info.width !== undefined && info.height !== undefined ? `, ${info.width}x${info.height}` : "";
  return `${info.mediaType}${size}, ${info.bytes} bytes`;
}

/**
 * The text that replaces an old image; `key` is its archive key (undefined: not saved). `shown`: the
 * consumer's recall gives the image back (RecallOptions.images), so the stub says so.
 */
export function buildImageStub(info: ImageInfo, key: string | undefined, shown = false): string {
  const how =
    key === undefined
      ? "It was not saved"
      : shown
        ? `Archived as ${formatMarker(key)}: recall shows it again`
        : `Archived as ${formatMarker(key)}: recall describes it; it cannot be shown again`;
  return `${LEAD}${describe(info)}. ${how}.]`;
}

export function isImageStub(text: string): boolean {
  return text.startsWith(LEAD) && text.length < 512 && STUB_RE.test(text);
}

/** The archive entry of an image part: every field, so the part comes back exactly. */
export function imageEntry(part: ImagePart): string {
  return ENTRY_PREFIX + JSON.stringify(part);
}

/** The image part an archive entry holds, or undefined when the entry is text. */
export function parseImageEntry(content: string): ImagePart | undefined {
  if (!content.startsWith(ENTRY_PREFIX)) return undefined;
  try {
    const value = JSON.parse(content.slice(ENTRY_PREFIX.length)) as unknown;
    if (value === null || typeof value !== "object" || (value as { type?: unknown }).type !== "image") return undefined;
    return value as ImagePart;
  } catch {
    return undefined;
  }
}

/** recall's answer for the image it gives back (RecallOptions.images): the image itself comes with it. */
export function attachedImageText(key: string, info: ImageInfo): string {
  return `[recall ${formatMarker(key)}: the image cut from an old tool result — ${describe(info)} — is attached to this answer.]`;
}

/** recall's answer for an image it does not give back in this answer: another one already is, or there is no room. */
export function heldImageText(key: string, info: ImageInfo | undefined, why: string): string {
  const what = info !== undefined ? describe(info) : "a remote image";
  return `[recall ${formatMarker(key)}: an image cut from an old tool result — ${what}. ${why}]`;
}

/** An image's section when its full description does not fit its share of a many-key answer. */
export function shortImageText(key: string, info: ImageInfo | undefined): string {
  return `[recall ${formatMarker(key)}: an old image, ${info !== undefined ? describe(info) : "remote"}; recall it alone.]`;
}

/** recall's answer for an image entry. */
export function describeImageEntry(key: string, info: ImageInfo | undefined): string {
  const what = info !== undefined ? describe(info) : "a remote image";
  return (
    `[recall ${formatMarker(key)}: an image cut from an old tool result — ${what}. ` +
    "recall answers with text, so it cannot show the image again; run the tool that made it again if you need to see it.]"
  );
}
