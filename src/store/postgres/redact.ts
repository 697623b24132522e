// Passwords never leave the process in a message, a log line or the viewer: URLs are shown with the
// password replaced, and any text that might echo it has it masked.
export const MASK = "***";

/** `postgres://user:secret@host/db?password=x` → `postgres://user:***@host/db?password=***`. */
export function redactUrl(url: string): string {
  let out = url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@?#]*):[^@/?#]*@/i, `$1:${MASK}@`);
  out = out.replace(/([?&](?:password|sslpassword)=)[^&#]*/gi, `$1${MASK}`);
  return out;
}

/** Masks the password and anything that looks like a URL carrying one. */
export function redact(text: string, password: string | undefined): string {
  let out = text.replace(/[a-z][a-z0-9+.-]*:\/\/[^\s'"]+/gi, (u) => redactUrl(u));
  if (password !== undefined && password.length > 0) out = out.split(password).join(MASK);
  return out;
}
