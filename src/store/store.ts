// The Store contract every backend implements (memory, JSONL + sidecars, SQLite).
import type { Value, ValueList } from "./address.js";
import type { Scope, SessionScope } from "./scope.js";
import type { Write } from "./write.js";

export interface ListElement<T> {
  /** The element's place in the session-global sequence space. */
  readonly seq: number;
  readonly value: T;
  readonly tag?: string;
}

export interface ListReadOptions {
  /** Exclusive: start after (asc) or before (desc) this seq. Pass the previous page's `cursor`. */
  readonly cursor?: number;
  readonly order?: "asc" | "desc";
  /** How many elements to inspect at most; default 1000, clamped to 10000. */
  readonly limit?: number;
  /** Stop at, and include, the first inspected element carrying this tag. Never searches past `limit`. */
  readonly stopAtTag?: string;
}

export interface ListPage<T> {
  readonly elements: readonly ListElement<T>[];
  /** Present iff more elements exist past this page in the read direction; pass it back to continue. */
  readonly cursor?: number;
}

/** Session-scope counts only: scoped values, lists and retirements never show here. */
export interface StoreStats {
  readonly values: number;
  readonly lists: number;
  readonly listElements: number;
}

/**
 * `"process"`: a commit resolves once its bytes are with the OS (survives our process dying).
 * `"os"`: additionally fsync — at `sync()`, on every retirement, and at most `syncIntervalMs` after
 * any other commit (group commit).
 */
export type Durability = "process" | "os";

export interface CommitResult {
  /** The transaction's seq; its n writes occupy seq … seq+n-1. */
  readonly seq: number;
}

export interface Store {
  /** One transaction in one scope. Session transactions may also retire ephemeral scopes. */
  commit<Sc extends Scope = SessionScope>(writes: readonly Write<Sc>[]): Promise<CommitResult>;
  get<T>(address: Value<T, Scope>): T | undefined;
  readList<T>(address: ValueList<T, Scope>, options?: ListReadOptions): ListPage<T>;
  stats(): StoreStats;
  /** Resolves when everything committed so far is on stable storage (fsync), whatever the durability level. */
  sync(): Promise<void>;
  /** Drains admitted commits, then releases the session; later calls fail with StoreClosedError. */
  close(): Promise<void>;
}

export const DEFAULT_LIST_LIMIT = 1000;
export const MAX_LIST_LIMIT = 10_000;
