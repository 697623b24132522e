// spool/errors — the error base below every layer, and the one wording of a whole-number range its
// messages use. Imports nothing; every layer may import it.
export { SpoolError } from "./spool-error.js";
export { isWholeNumberIn, wholeNumberRange } from "./whole-number.js";
