// From one view to the next as the cheapest of four update kinds, and back (applyUpdate), so a
// consumer holding the previous view can fold each update. Derivation runs only when the publisher
// publishes (≤ ~10/s), so its O(view) cost does not depend on how fast the process writes.
import type { CaptureMetadata, CaptureUpdate, CaptureView } from "./types.js";
import { utf8Length } from "./utf8.js";

/** Probe length for locating the new view's start inside the old one. */
const PROBE = 64;
/** Candidate positions verified before giving up on a slide (repetitive text has many). */
const MAX_CANDIDATES = 16;

export function metadataOf(view: CaptureView): CaptureMetadata {
  const { text: _text, ...metadata } = view;
  return metadata;
}

const sameMetadata = (a: CaptureView, b: CaptureView): boolean => JSON.stringify(metadataOf(a)) === JSON.stringify(metadataOf(b));

/**
 * Units to drop from the front of `prev` so that what remains is a prefix of `cur`, or -1.
 * Only drops that leave a non-empty overlap are considered.
 */
export function slideDrop(prev: string, cur: string): number {
  if (prev.length === 0 || cur.length === 0) return -1;
  const probe = cur.slice(0, Math.min(PROBE, cur.length));
  let from = 1;
  for (let tries = 0; tries < MAX_CANDIDATES; tries++) {
    const d = prev.indexOf(probe, from);
    if (d === -1) break;
    const rest = prev.length - d;
    if (rest <= cur.length && cur.startsWith(prev.slice(d))) return d;
    from = d + 1;
  }
  // The overlap may be shorter than the probe.
  for (let k = Math.min(probe.length - 1, prev.length - 1); k > 0; k--) {
    if (cur.startsWith(prev.slice(prev.length - k))) return prev.length - k;
  }
  return -1;
}

/** undefined when nothing changed (the publisher then advances its baseline silently). */
export function deriveUpdate(prev: CaptureView | undefined, cur: CaptureView): CaptureUpdate | undefined {
  if (prev === undefined) return { kind: "replace", view: cur };
  if (prev.text === cur.text) return sameMetadata(prev, cur) ? undefined : { kind: "metadata", metadata: metadataOf(cur) };
  if (cur.text.startsWith(prev.text)) {
    return { kind: "append", text: cur.text.slice(prev.text.length), metadata: metadataOf(cur) };
  }
  const drop = slideDrop(prev.text, cur.text);
  if (drop > 0) {
    return { kind: "slide", drop, text: cur.text.slice(prev.text.length - drop), metadata: metadataOf(cur) };
  }
  return { kind: "replace", view: cur };
}

export function applyUpdate(current: CaptureView | undefined, update: CaptureUpdate): CaptureView {
  if (update.kind === "replace") return update.view;
  if (current === undefined) {
    throw new TypeError(`a "${update.kind}" update needs a previous view; the first update is always "replace"`);
  }
  switch (update.kind) {
    case "metadata":
      return { ...update.metadata, text: current.text };
    case "append":
      return { ...update.metadata, text: current.text + update.text };
    case "slide":
      return { ...update.metadata, text: current.text.slice(update.drop) + update.text };
  }
}

/** What the publisher paces on: the encoded size of the update. */
export const measureUpdate = (update: CaptureUpdate): number => utf8Length(JSON.stringify(update));
