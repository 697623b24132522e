// Whether a tool result is the output of a command that failed, read from the conventions agents
// use to report an exit status in the text itself (most have no error flag for a non-zero exit):
// mini-swe-agent's `<returncode>N</returncode>` first line, Claude Code's `Exit code N` first line,
// Codex's `Exit code: N` / `Process exited with code N` lines and its JSON `"exit_code": N`
// metadata at the end. Only the first and last few hundred characters are read, so a 10 MB log
// costs the same as a short one.
const HEAD = 300;
const TAIL = 400;
const HEAD_RE = /^(?:<returncode>\s*([1-9]\d*)\s*<\/returncode>|Exit code:? ([1-9]\d*)\b|Process exited with code ([1-9]\d*)\b)/m;
const TAIL_RE = /"exit_code"\s*:\s*([1-9]\d*)|(?:^|\n)(?:Exit code:? |Process exited with code )([1-9]\d*)\b/;

export function isFailedCommandOutput(text: string): boolean {
  const head = text.slice(0, HEAD);
  // only the first line(s) of the head count for the head conventions: a status line opens the text
  const opening = head.slice(0, head.indexOf("\n", 80) < 0 ? head.length : head.indexOf("\n", 80));
  if (HEAD_RE.test(opening)) return true;
  return TAIL_RE.test(text.length > TAIL ? text.slice(text.length - TAIL) : text);
}
