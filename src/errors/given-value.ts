// A caller's value (most often a model's tool argument) as an error message shows it, in one wording
// for every layer: recall's paging arguments and an unknown background processId read alike.

/** The longest a shown value gets: a 1 MB string or a 10,000-element array was echoed whole. */
const SHOWN_CHARS = 60;

/**
 * The value as it was sent: the string "5" quoted, so "got 5" never reads as a refused number;
 * clipped, so a 1 MB string or a long array comes back as its first 60 characters.
 */
export function givenValue(v: unknown): string {
  const text = typeof v === "string" ? JSON.stringify(v) : typeof v === "object" && v !== null ? (JSON.stringify(v) ?? String(v)) : String(v);
  return text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS - 1)}…` : text;
}
