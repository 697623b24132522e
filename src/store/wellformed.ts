// Lone surrogates would be replaced when a string becomes UTF-8 (files, SQLite), so two distinct JS
// strings could alias one stored name. Names are checked here once, at address construction.
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function isWellFormed(s: string): boolean {
  return !loneSurrogate.test(s);
}
