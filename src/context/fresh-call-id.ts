// The name a renamed tool call gets: `<id>_2`, `<id>_3`, … — the first that nothing in the history
// uses. Shared by pairing (a repeated id within one assistant message) and id-collisions (an id reused
// across turns), so a call is renamed the same way whichever repair does it.

/**
 * `taken` holds every id the new name must not be; `nextSuffix` remembers, per id, the suffix to try
 * next: a `call_0` reused in every one of 10,000 turns costs 10,000 lookups, not 50 million. Kept
 * within Anthropic's id alphabet ([a-zA-Z0-9_-]) when the id is.
 */
export function freshCallId(id: string, taken: ReadonlySet<string>, nextSuffix: Map<string, number>): string {
  for (let n = nextSuffix.get(id) ?? 2; ; n++) {
    const candidate = `${id}_${n}`;
    if (taken.has(candidate)) continue;
    nextSuffix.set(id, n + 1);
    return candidate;
  }
}
