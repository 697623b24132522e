// PostgreSQL text cannot hold U+0000, which spool names (namespaces, keys, scope ids, tags) may
// contain. Names are stored through a reversible escape: U+0001 doubles, U+0000 becomes U+0001 U+0002.
// JSON values never need it: JSON text escapes every control character.
const NEEDS = /[\u0000\u0001]/;

export function toPgText(s: string): string {
  return NEEDS.test(s) ? s.replace(/[\u0000\u0001]/g, (c) => (c === "\u0001" ? "\u0001\u0001" : "\u0001\u0002")) : s;
}

export function fromPgText(s: string): string {
  return s.includes("\u0001") ? s.replace(/\u0001([\u0001\u0002])/g, (_, c: string) => (c === "\u0001" ? "\u0001" : "\u0000")) : s;
}

/** A SQL string literal for the simple-query protocol (standard_conforming_strings is on since 9.1). */
export function literal(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}
