// Waiting on a condition instead of sleeping: polls `get` until it returns something truthy, and fails
// with `what` when it does not within `ms`.
export async function until<T>(get: () => T | null | undefined | false | Promise<T | null | undefined | false>, what = "a condition", ms = 20_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const v = await get();
    if (v) return v;
    if (Date.now() - started > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
