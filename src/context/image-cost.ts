// What an image in a tool result costs the model, in the characters every context budget counts.
// Anthropic bills an image at width×height/750 tokens and scales it down to about 1,600 tokens at
// most, so a 400,000-char screenshot weighs ~6,400 chars (4 chars a token), like the text it
// displaces. The turn budget (budget.ts) and a recall answer that carries an image (recall.ts) both
// count it here, so the two never disagree about what an image takes from a turn.
import { imageInfo } from "./image-info.js";
import type { ImagePart } from "./messages.js";

/** The most an image counts toward a turn: ~1,600 tokens (Anthropic's cap after scaling) at 4 chars a token. */
export const IMAGE_BUDGET_CHARS = 6_400;

/** What an image costs the model in chars: width×height/750 tokens up to IMAGE_BUDGET_CHARS / 4, at 4 chars a token. */
export function imageBudgetChars(width: number | undefined, height: number | undefined): number {
  if (width === undefined || height === undefined) return IMAGE_BUDGET_CHARS;
  return Math.min(IMAGE_BUDGET_CHARS, 4 * Math.ceil((width * height) / 750));
}

/** What one image in a result counts toward a turn (and toward a recall answer that carries it). */
export function imageCostChars(part: ImagePart): number {
  const info = imageInfo(part);
  // a remote URL costs the model the same once fetched, but its size is not known here
  return info !== undefined ? Math.min(info.payloadChars, imageBudgetChars(info.width, info.height)) : IMAGE_BUDGET_CHARS;
}
