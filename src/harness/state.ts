// Replicated state host: one writer per named state, many subscribers. Each subscriber is handed a base
// batch first and then every later batch, as decoded ops — the binding that carries them (SSE in
// spool/wire) owns numbering and one encoder per subscriber, because a shared encoder would hand a late
// joiner path ids it never saw.
import { SpoolError } from "../errors/index.js";
import { track, type Op, type Tracker } from "../delta/index.js";

export type BatchListener = (ops: readonly Op[]) => void;

export interface MutableState<T extends object> {
  readonly name: string;
  /** The current value (read-only by convention: write through mutate/replace). */
  readonly value: T;
  /** Change the value synchronously; the recorded ops go to every subscriber. */
  mutate(fn: (draft: T) => void): void;
  /** Replace the whole value; subscribers receive a base batch. */
  replace(next: T): void;
  /**
   * Receive a base batch now, then every later batch, in order. Batches are shared by all subscribers:
   * do not mutate them (fold in-process copies with applyImmutable). Returns the unsubscribe function.
   */
  subscribe(listener: BatchListener, onClose?: () => void): () => void;
  /** End the state: subscribers are told it closed and get nothing more. */
  close(): void;
  readonly closed: boolean;
}

export interface StateHost {
  state<T extends object>(name: string, initial: T): MutableState<T>;
  get(name: string): MutableState<object> | undefined;
  names(): string[];
  /** Called when a state is added; used by bindings that announce new states. */
  onState(listener: (name: string) => void): () => void;
}

export class StateError extends SpoolError {
  constructor(
    override readonly code: "SPOOL_STATE_EXISTS" | "SPOOL_STATE_CLOSED",
    message: string,
  ) {
    super(code, message);
  }
}

export function createStateHost(): StateHost {
  const states = new Map<string, MutableState<object>>();
  const added = new Set<(name: string) => void>();

  const create = <T extends object>(name: string, initial: T): MutableState<T> => {
    const tracker: Tracker<T> = track(initial);
    tracker.flush(); // subscribers get their own base; the tracker's first base has no audience
    const listeners = new Map<BatchListener, (() => void) | undefined>();
    let closed = false;

    const publish = (): void => {
      const ops = tracker.flush();
      if (ops.length === 0) return;
      for (const listener of [...listeners.keys()]) listener(ops);
    };
    const assertOpen = (): void => {
      if (closed) throw new StateError("SPOOL_STATE_CLOSED", `state "${name}" is closed; create a new state to publish again`);
    };

    const state: MutableState<T> = {
      name,
      get value() {
        return tracker.target;
      },
      get closed() {
        return closed;
      },
      mutate(fn) {
        assertOpen();
        try {
          fn(tracker.state);
        } finally {
          publish();
        }
      },
      replace(next) {
        assertOpen();
        tracker.state = next;
        publish();
      },
      subscribe(listener, onClose) {
        if (closed) {
          onClose?.();
          return () => {};
        }
        listeners.set(listener, onClose);
        listener([["r", structuredClone(tracker.target)]]);
        return () => {
          listeners.delete(listener);
        };
      },
      close() {
        if (closed) return;
        closed = true;
        const ends = [...listeners.values()];
        listeners.clear();
        states.delete(name);
        for (const end of ends) end?.();
      },
    };
    return state;
  };

  return {
    state(name, initial) {
      if (states.has(name)) throw new StateError("SPOOL_STATE_EXISTS", `a state named "${name}" already exists; pick another name or close it first`);
      const s = create(name, initial);
      states.set(name, s as unknown as MutableState<object>);
      for (const l of added) l(name);
      return s;
    },
    get(name) {
      return states.get(name);
    },
    names() {
      return [...states.keys()];
    },
    onState(listener) {
      added.add(listener);
      return () => added.delete(listener);
    },
  };
}
