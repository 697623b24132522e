// How deep a parsed JSON value nests, found iteratively: JSON.parse accepts any depth, but
// JSON.stringify, structuredClone and every recursive walk overflow the stack on a few thousand
// levels, so input is judged here, before anything recursive touches it.

/** The path (`.input.a.a…`, shortened) of the first place nested deeper than `limit`, or undefined. */
export function tooDeep(value: unknown, limit: number): string | undefined {
  const stack: { v: unknown; depth: number; path: string }[] = [{ v: value, depth: 0, path: "" }];
  while (stack.length > 0) {
    const { v, depth, path } = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth >= limit) return path.length > 60 ? `${path.slice(0, 60)}…` : path;
    const entries = Array.isArray(v) ? v.map((x, i) => [`[${i}]`, x] as const) : Object.entries(v).map(([k, x]) => [`.${k}`, x] as const);
    for (const [step, child] of entries) stack.push({ v: child, depth: depth + 1, path: path.length > 60 ? path : path + step });
  }
  return undefined;
}
