// Normalises list read options once so every backend pages identically.
import { isWholeNumberIn, wholeNumberRange } from "../errors/index.js";
import { ReadOptionsError } from "./errors.js";
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, type ListReadOptions } from "./store.js";

export interface NormalReadOptions {
  readonly cursor: number | undefined;
  readonly desc: boolean;
  readonly limit: number;
  readonly stopAtTag: string | undefined;
}

export function normalizeReadOptions(o: ListReadOptions | undefined): NormalReadOptions {
  const order = o?.order ?? "asc";
  if (order !== "asc" && order !== "desc") throw new ReadOptionsError(`order ${JSON.stringify(order)}: use "asc" or "desc"`);
  const limit = o?.limit ?? DEFAULT_LIST_LIMIT;
  if (!isWholeNumberIn(limit, 1)) throw new ReadOptionsError(`limit ${String(limit)}: use ${wholeNumberRange(1)}`);
  const cursor = o?.cursor;
  if (cursor !== undefined && !Number.isSafeInteger(cursor)) {
    throw new ReadOptionsError(`cursor ${String(cursor)}: pass the cursor (a seq) returned by the previous page`);
  }
  const stopAtTag = o?.stopAtTag;
  if (stopAtTag !== undefined && (typeof stopAtTag !== "string" || stopAtTag.length === 0)) {
    throw new ReadOptionsError(`stopAtTag ${JSON.stringify(stopAtTag)}: use a non-empty string`);
  }
  return { cursor, desc: order === "desc", limit: Math.min(limit, MAX_LIST_LIMIT), stopAtTag };
}
