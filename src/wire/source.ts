// What the SSE binding serves: named replicated states that hand each subscriber a base batch first and
// then every later batch. The harness's state host satisfies this shape; the wire layer never imports it.
import type { Op } from "../delta/index.js";

export interface ReplicatedState {
  subscribe(listener: (ops: readonly Op[]) => void, onClose?: () => void): () => void;
}

export interface StateSource {
  names(): string[];
  get(name: string): ReplicatedState | undefined;
}
