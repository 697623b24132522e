// Typed addresses. The scope parameter is covariant (reads accept an address of any scope); the
// element type is invariant so a Value<string> cannot be read back as a Value<number>.
import { AddressError, ScopeIdError } from "./errors.js";
import { encodeScopeId, sessionScope, type EphemeralScope, type Scope, type SessionScope } from "./scope.js";
import { isWellFormed } from "./wellformed.js";

declare const elementType: unique symbol;

export interface Value<T, Sc extends Scope = SessionScope> {
  readonly kind: "value";
  readonly namespace: string;
  readonly key: string;
  readonly scope: Sc;
  readonly [elementType]?: (t: T) => T;
}

export interface ValueList<T, Sc extends Scope = SessionScope> {
  readonly kind: "list";
  readonly namespace: string;
  readonly key: string;
  readonly scope: Sc;
  readonly [elementType]?: (t: T) => T;
}

function checkName(namespace: unknown, key: unknown): void {
  if (typeof namespace !== "string" || namespace.length === 0) throw new AddressError(`namespace ${JSON.stringify(namespace)}`);
  if (typeof key !== "string") throw new AddressError(`key ${JSON.stringify(key)} is not a string`);
  if (!isWellFormed(namespace) || !isWellFormed(key)) throw new AddressError("a name contains a lone surrogate");
}

function checkScope(scope: unknown): Scope {
  if (scope === undefined) return sessionScope;
  const s = scope as Scope;
  if (s?.kind === "session") return sessionScope;
  if (s?.kind === "ephemeral") {
    encodeScopeId(s.id);
    return Object.freeze({ kind: "ephemeral", id: s.id });
  }
  throw new ScopeIdError(`not a scope: ${JSON.stringify(scope)}`);
}

export function value<T>(namespace: string, key?: string): Value<T, SessionScope>;
export function value<T>(namespace: string, key: string, scope: EphemeralScope): Value<T, EphemeralScope>;
export function value<T>(namespace: string, key: string, scope: SessionScope): Value<T, SessionScope>;
export function value<T>(namespace: string, key: string, scope: Scope): Value<T, Scope>;
export function value<T>(namespace: string, key = "", scope?: Scope): Value<T, Scope> {
  checkName(namespace, key);
  return Object.freeze({ kind: "value", namespace, key, scope: checkScope(scope) });
}

export function list<T>(namespace: string, key?: string): ValueList<T, SessionScope>;
export function list<T>(namespace: string, key: string, scope: EphemeralScope): ValueList<T, EphemeralScope>;
export function list<T>(namespace: string, key: string, scope: SessionScope): ValueList<T, SessionScope>;
export function list<T>(namespace: string, key: string, scope: Scope): ValueList<T, Scope>;
export function list<T>(namespace: string, key = "", scope?: Scope): ValueList<T, Scope> {
  checkName(namespace, key);
  return Object.freeze({ kind: "list", namespace, key, scope: checkScope(scope) });
}
