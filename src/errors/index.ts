// spool/errors — the error base below every layer. Imports nothing; every layer may import it.
export { SpoolError } from "./spool-error.js";
