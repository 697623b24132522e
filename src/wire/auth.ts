// The one token rule for every protected route (the SSE API and anything a fallback marks protected,
// such as the spill files): the token may travel as `Authorization: Bearer <token>` or as `?token=`,
// every copy presented must be the token, and at least one must be there. A request that carries a
// right copy and a wrong one is refused, so no route can be reached by a mix another route refuses.
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** Hashing first makes the comparison take the same time whatever the lengths of the two strings. */
function digest(s: string): Buffer {
  return createHash("sha256").update(s, "utf8").digest();
}

export function authorized(req: IncomingMessage, url: URL, token: string): boolean {
  const presented: string[] = [];
  const header = req.headers.authorization;
  if (header !== undefined) {
    const m = /^Bearer[ ]+(\S+)[ ]*$/.exec(header);
    if (m === null) return false;
    presented.push(m[1]!);
  }
  presented.push(...url.searchParams.getAll("token"));
  if (presented.length === 0) return false;
  const want = digest(token);
  let ok = true;
  // Every copy is compared (no early exit), so the time taken does not tell which copy was wrong.
  for (const p of presented) ok = timingSafeEqual(digest(p), want) && ok;
  return ok;
}
