// Properties of the PostgreSQL backend's pure helpers: URL redaction never lets a password through,
// and the name escape for PostgreSQL text round-trips every string and never emits U+0000.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { redact, redactUrl } from "../../src/store/postgres/redact.js";
import { fromPgText, toPgText } from "../../src/store/postgres/text.js";

const lower = fc.stringMatching(/^[a-z][a-z0-9]{0,11}$/);
// Passwords from characters a user, host or database name here never holds.
const secret = fc.stringMatching(/^[A-Z!$&()*+,;=~_.-]{8,24}$/);

describe("redaction", () => {
  it("a password in the URL's userinfo or query never survives, and the rest of the URL does", () => {
    fc.assert(
      fc.property(lower, secret, lower, lower, fc.boolean(), (user, password, host, db, inQuery) => {
        const enc = encodeURIComponent(password);
        const url = inQuery
          ? `postgres://${user}@${host}:5432/${db}?sslmode=require&password=${enc}`
          : `postgres://${user}:${enc}@${host}:5432/${db}?sslmode=require`;
        const shown = redactUrl(url);
        expect(shown).not.toContain(password);
        expect(shown).not.toContain(enc);
        expect(shown).toContain("***");
        const u = new URL(shown);
        expect([u.hostname, u.pathname, u.searchParams.get("sslmode")]).toEqual([host, `/${db}`, "require"]);
        expect(redact(`failed for ${url}: ${password}`, password)).not.toContain(password);
      }),
    );
  });
});

describe("names in PostgreSQL text", () => {
  it("round-trips every string and never emits U+0000", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom("\u0000", "\u0001", "\u0002", "a", "é", "\\", "'") }), fc.string(), (tricky, any) => {
        for (const s of [tricky, any]) {
          const t = toPgText(s);
          expect(t.includes("\u0000")).toBe(false);
          expect(fromPgText(t)).toBe(s);
        }
      }),
      { numRuns: 500 },
    );
  });
});
