// Write constructors and the transaction check every backend runs before touching anything.
// A write's scope parameter is invariant, so `commit` cannot take session and ephemeral writes in
// one array; two different ephemeral ids share a type, so that case is checked at runtime.
import type { Value, ValueList } from "./address.js";
import { MixedScopeError, WriteError } from "./errors.js";
import { toJsonText } from "./json-text.js";
import { encodeScopeId, sessionScope, type EphemeralScope, type Scope, type SessionScope } from "./scope.js";
import { isWellFormed } from "./wellformed.js";

declare const writeScope: unique symbol;

interface WriteBase<Sc extends Scope> {
  readonly scope: Sc;
  readonly [writeScope]?: (s: Sc) => Sc;
}
export interface SetValueWrite<Sc extends Scope = SessionScope> extends WriteBase<Sc> {
  readonly op: "setValue";
  readonly namespace: string;
  readonly key: string;
  readonly value: unknown;
}
export interface DeleteValueWrite<Sc extends Scope = SessionScope> extends WriteBase<Sc> {
  readonly op: "deleteValue";
  readonly namespace: string;
  readonly key: string;
}
export interface AppendListWrite<Sc extends Scope = SessionScope> extends WriteBase<Sc> {
  readonly op: "appendList";
  readonly namespace: string;
  readonly key: string;
  readonly element: unknown;
  readonly tag: string | undefined;
}
export interface DeleteListWrite<Sc extends Scope = SessionScope> extends WriteBase<Sc> {
  readonly op: "deleteList";
  readonly namespace: string;
  readonly key: string;
}
export interface RetireScopeWrite extends WriteBase<SessionScope> {
  readonly op: "retireScope";
  readonly target: EphemeralScope;
}

export type Write<Sc extends Scope = SessionScope> =
  | SetValueWrite<Sc>
  | DeleteValueWrite<Sc>
  | AppendListWrite<Sc>
  | DeleteListWrite<Sc>
  | ([Sc] extends [SessionScope] ? RetireScopeWrite : never);

export function setValue<T, Sc extends Scope>(address: Value<T, Sc>, value: T): Write<Sc> {
  return Object.freeze({ op: "setValue", scope: address.scope, namespace: address.namespace, key: address.key, value }) as Write<Sc>;
}
export function deleteValue<T, Sc extends Scope>(address: Value<T, Sc>): Write<Sc> {
  return Object.freeze({ op: "deleteValue", scope: address.scope, namespace: address.namespace, key: address.key }) as Write<Sc>;
}
export function appendList<T, Sc extends Scope>(address: ValueList<T, Sc>, element: T, tag?: string): Write<Sc> {
  if (tag !== undefined && (typeof tag !== "string" || tag.length === 0 || !isWellFormed(tag))) {
    throw new WriteError(`list tag ${JSON.stringify(tag)}: tags are non-empty, well-formed strings`);
  }
  return Object.freeze({ op: "appendList", scope: address.scope, namespace: address.namespace, key: address.key, element, tag }) as Write<Sc>;
}
export function deleteList<T, Sc extends Scope>(address: ValueList<T, Sc>): Write<Sc> {
  return Object.freeze({ op: "deleteList", scope: address.scope, namespace: address.namespace, key: address.key }) as Write<Sc>;
}
/** Ends a scope's lifetime: every record of the scope with a lower seq is gone. A session write. */
export function retireScope(scope: EphemeralScope): Write<SessionScope> {
  encodeScopeId(scope?.id);
  return Object.freeze({ op: "retireScope", scope: sessionScope, target: Object.freeze({ kind: "ephemeral", id: scope.id }) }) as RetireScopeWrite;
}

/** The backend-neutral form of one write: names resolved, values already JSON text. */
export type PreparedWrite =
  | { readonly op: "set"; readonly ns: string; readonly key: string; readonly json: string }
  | { readonly op: "delete"; readonly ns: string; readonly key: string }
  | { readonly op: "append"; readonly ns: string; readonly key: string; readonly json: string; readonly tag: string | undefined }
  | { readonly op: "clear"; readonly ns: string; readonly key: string }
  | { readonly op: "retire"; readonly scope: string };

export interface PreparedTransaction {
  /** "" for the session scope, else the ephemeral id. */
  readonly scope: string;
  readonly writes: readonly PreparedWrite[];
}

function scopeName(s: Scope | undefined): string | undefined {
  if (s?.kind === "session") return "";
  if (s?.kind === "ephemeral" && typeof s.id === "string") return s.id;
  return undefined;
}

type AnyWrite = SetValueWrite<Scope> | DeleteValueWrite<Scope> | AppendListWrite<Scope> | DeleteListWrite<Scope> | RetireScopeWrite;

/** Checks a whole transaction and serialises its values; throws before anything is mutated. */
export function prepareTransaction(writes: readonly unknown[]): PreparedTransaction {
  if (!Array.isArray(writes)) throw new WriteError("commit takes an array of writes");
  if (writes.length === 0) throw new WriteError("a transaction needs at least one write");
  let scope: string | undefined;
  const out: PreparedWrite[] = [];
  for (let i = 0; i < writes.length; i++) {
    const w = writes[i] as AnyWrite;
    const s = scopeName(w?.scope);
    if (s === undefined) throw new WriteError(`write ${i} was not made by setValue/deleteValue/appendList/deleteList/retireScope`);
    if (scope === undefined) scope = s;
    else if (scope !== s) {
      const name = (x: string) => (x === "" ? "session" : `ephemeral ${JSON.stringify(x)}`);
      throw new MixedScopeError(`write ${i} is in the ${name(s)} scope, earlier writes in the ${name(scope)} scope`);
    }
    const where = `write ${i}`;
    switch (w.op) {
      case "setValue":
        out.push({ op: "set", ns: w.namespace, key: w.key, json: toJsonText(w.value, `${where} (setValue)`) });
        break;
      case "deleteValue":
        out.push({ op: "delete", ns: w.namespace, key: w.key });
        break;
      case "appendList":
        out.push({ op: "append", ns: w.namespace, key: w.key, json: toJsonText(w.element, `${where} (appendList)`), tag: w.tag });
        break;
      case "deleteList":
        out.push({ op: "clear", ns: w.namespace, key: w.key });
        break;
      case "retireScope":
        if (s !== "") throw new MixedScopeError(`${where} retires a scope inside an ephemeral transaction`);
        out.push({ op: "retire", scope: w.target.id });
        break;
      default:
        throw new WriteError(`${where} has an unknown op ${JSON.stringify((w as { op?: unknown }).op)}`);
    }
  }
  return { scope: scope!, writes: out };
}
