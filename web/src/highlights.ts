// Marks error and warning lines in the output with the CSS Custom Highlight API: ranges over the one
// text node, so the DOM and the append path stay as they are. Browsers without it show plain text.
const KINDS = [
  ["spool-error", /\b(?:error|fatal|failed)\b/i],
  ["spool-warning", /\bwarning\b/i],
] as const;

export function markLines(node: Text): void {
  if (typeof CSS === "undefined" || !("highlights" in CSS) || typeof Highlight === "undefined") return;
  const text = node.data;
  const found = new Map<string, Range[]>(KINDS.map(([name]) => [name, []]));
  for (let start = 0; start < text.length; ) {
    const nl = text.indexOf("\n", start);
    const end = nl < 0 ? text.length : nl;
    const line = text.slice(start, end);
    const kind = KINDS.find(([, re]) => re.test(line));
    if (kind) {
      const range = new Range();
      range.setStart(node, start);
      range.setEnd(node, end);
      found.get(kind[0])!.push(range);
    }
    start = end + 1;
  }
  // HighlightRegistry is maplike; TypeScript's DOM lib types only its iteration.
  const registry = CSS.highlights as unknown as Map<string, Highlight>;
  for (const [name, ranges] of found) registry.set(name, new Highlight(...ranges));
}
