// spool/errors — the error base below every layer, and the wordings its messages share: a whole-number
// range, and a caller's value as sent. Imports nothing; every layer may import it.
export { givenValue } from "./given-value.js";
export { countOf } from "./plural.js";
export { escapeControl, printableText } from "./printable.js";
export { SpoolError } from "./spool-error.js";
export { isWholeNumberIn, wholeNumberRange } from "./whole-number.js";
