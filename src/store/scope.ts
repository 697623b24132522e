// Scope identity: the session scope, and ephemeral scopes named by a reusable id (an operation id).
import { ScopeIdError } from "./errors.js";
import { isWellFormed } from "./wellformed.js";

export interface SessionScope {
  readonly kind: "session";
}
export interface EphemeralScope {
  readonly kind: "ephemeral";
  readonly id: string;
}
export type Scope = SessionScope | EphemeralScope;

/** Sidecar file names embed the encoded id; 180 leaves room under the common 255-byte name limit. */
export const MAX_ENCODED_SCOPE_ID = 180;

export const sessionScope: SessionScope = Object.freeze({ kind: "session" });

/** Encodes an id for a file name, or throws ScopeIdError. */
export function encodeScopeId(id: unknown): string {
  if (typeof id !== "string") throw new ScopeIdError(`expected a string, got ${typeof id}`);
  if (id.length === 0) throw new ScopeIdError("the id is empty");
  if (!isWellFormed(id)) throw new ScopeIdError("the id contains a lone surrogate");
  const encoded = encodeURIComponent(id);
  if (encoded.length > MAX_ENCODED_SCOPE_ID) {
    throw new ScopeIdError(`the encoded id is ${encoded.length} characters long`);
  }
  return encoded;
}

/** Equal ids name the same scope; the object returned is frozen and its identity never matters. */
export function ephemeralScope(id: string): EphemeralScope {
  encodeScopeId(id);
  return Object.freeze({ kind: "ephemeral", id });
}

/** The physical scope key used by every backend: "" for the session scope, else the id. */
export function scopeKey(scope: Scope): string {
  return scope.kind === "session" ? "" : scope.id;
}
